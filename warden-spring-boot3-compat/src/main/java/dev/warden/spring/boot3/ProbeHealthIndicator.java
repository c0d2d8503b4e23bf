package dev.warden.spring.boot3;

import dev.warden.spring.probe.HealthReport;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

import java.util.function.Consumer;

/** A Boot 3.5 health indicator running one of Warden's line-neutral probes. */
final class ProbeHealthIndicator extends AbstractHealthIndicator {

    private final Consumer<HealthReport> probe;

    ProbeHealthIndicator(String failure, Consumer<HealthReport> probe) {
        super(failure);
        this.probe = probe;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        probe.accept(new HealthReport() {
            @Override
            public HealthReport up() {
                builder.up();
                return this;
            }

            @Override
            public HealthReport down() {
                builder.down();
                return this;
            }

            @Override
            public HealthReport detail(String name, Object value) {
                builder.withDetail(name, value);
                return this;
            }
        });
    }
}
