package dev.warden.spring.internal;

import dev.warden.spring.probe.HealthReport;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.function.Consumer;

/**
 * A Boot 4 health indicator running one of Warden's line-neutral probes ({@code dev.warden.spring.probe}, shared
 * with the Boot 3.5 indicators of {@code warden-spring-boot3-compat}).
 */
public final class ProbeHealthIndicator extends AbstractHealthIndicator {

    private final Consumer<HealthReport> probe;

    /**
     * @param failure what the indicator reports when the probe throws
     * @param probe   the probe, writing to the report it is given
     */
    public ProbeHealthIndicator(String failure, Consumer<HealthReport> probe) {
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
