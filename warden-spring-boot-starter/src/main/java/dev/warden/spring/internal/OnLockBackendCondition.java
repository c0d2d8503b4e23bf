package dev.warden.spring.internal;

import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.ConfigurationCondition;

/**
 * A lock client is wanted: a backend module is on the class path (one nested condition per module), or
 * {@code warden.lock.backend} names one, so that a missing module is Warden's "no lock provider for
 * backend ..." at start-up rather than a missing bean. Without either (an application using only the
 * quota engine, which brings lock-api) there is no lock client.
 */
public final class OnLockBackendCondition extends AnyNestedCondition {

    public OnLockBackendCondition() {
        super(ConfigurationCondition.ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnClass(name = "dev.warden.lock.redis.RedisLockProvider")
    static class Redis {
    }

    @ConditionalOnClass(name = "dev.warden.lock.etcd.EtcdLockProvider")
    static class Etcd {
    }

    @ConditionalOnClass(name = "dev.warden.lock.zookeeper.ZooKeeperLockProvider")
    static class ZooKeeper {
    }

    @ConditionalOnProperty("warden.lock.backend")
    static class BackendNamed {
    }
}
