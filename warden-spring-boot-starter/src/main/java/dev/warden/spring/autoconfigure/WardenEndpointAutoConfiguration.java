package dev.warden.spring.autoconfigure;

import dev.warden.lock.LockClient;
import dev.warden.spring.internal.LocksEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The actuator endpoint {@code wardenlocks} (with Actuator present and a lock client bean): a lock's
 * holder, and an audited forced release. Available only when exposed, as every endpoint.
 */
@AutoConfiguration(after = WardenLockAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class, LockClient.class})
@ConditionalOnBean(LockClient.class)
public class WardenEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    LocksEndpoint wardenLocksEndpoint(LockClient locks) {
        return new LocksEndpoint(locks);
    }
}
