package dev.warden.spring.probe;

/**
 * Where a health probe writes what it found. Each Spring Boot line's health indicator adapts its own
 * {@code Health.Builder} to this (Boot 4's in {@code org.springframework.boot.health.contributor}, Boot 3.5's in
 * {@code org.springframework.boot.actuate.health}), so one probe serves both. A probe that throws leaves the
 * details it wrote; the indicator reports it down with the exception.
 */
public interface HealthReport {

    /** The component is up. */
    HealthReport up();

    /** The component is down. */
    HealthReport down();

    /** Adds a detail. */
    HealthReport detail(String name, Object value);
}
