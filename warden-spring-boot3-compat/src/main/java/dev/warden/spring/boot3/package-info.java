/**
 * Spring Boot 3.5's health indicators for Warden: {@link dev.warden.spring.boot3.WardenBoot3HealthAutoConfiguration},
 * brought by {@code warden-spring-boot-starter} and dormant on Boot 4. Name it in
 * {@code @SpringBootApplication(exclude = ...)} to switch it off wholesale.
 */
package dev.warden.spring.boot3;
