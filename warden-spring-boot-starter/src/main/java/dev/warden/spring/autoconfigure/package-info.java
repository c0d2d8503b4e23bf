/**
 * Spring Boot auto-configuration of Warden: {@link dev.warden.spring.autoconfigure.WardenLockAutoConfiguration},
 * {@link dev.warden.spring.autoconfigure.WardenQuotaAutoConfiguration} and
 * {@link dev.warden.spring.autoconfigure.WardenHealthAutoConfiguration}, with their properties. Name them in
 * {@code @SpringBootApplication(exclude = ...)} to switch one off wholesale.
 */
package dev.warden.spring.autoconfigure;
