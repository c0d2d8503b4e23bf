/**
 * Spring Boot auto-configuration of Warden: {@link dev.warden.spring.autoconfigure.WardenLockAutoConfiguration},
 * {@link dev.warden.spring.autoconfigure.WardenQuotaAutoConfiguration} and
 * {@link dev.warden.spring.autoconfigure.WardenHealthAutoConfiguration} (Boot 4's health indicators; on Boot 3.5,
 * {@code dev.warden.spring.boot3.WardenBoot3HealthAutoConfiguration} from {@code warden-spring-boot3-compat}), with
 * their properties. Name them in
 * {@code @SpringBootApplication(exclude = ...)} to switch one off wholesale.
 */
package dev.warden.spring.autoconfigure;
