package dev.warden.spring;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.micrometer.LockObservations;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.util.StringValueResolver;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a {@code @WithLock} method under its lock (a {@code @WithReadLock}/{@code @WithWriteLock} method under
 * its side of a read-write lock, a {@code @WithPermit} method holding its permits). The lock client and the observation registry are
 * looked up at the first call, so this interceptor (created with the post-processor, early) does not
 * pull them into existence before their own post-processors are ready.
 */
final class WithLockInterceptor implements MethodInterceptor {

    private static final Logger log = LoggerFactory.getLogger(WithLockInterceptor.class);

    private final ObjectProvider<LockClient> locks;
    private final ObjectProvider<ObservationRegistry> observationRegistry;
    private final BeanFactory beanFactory;
    private final StringValueResolver placeholders;
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final Map<MethodClassKey, WithLockSpec> specs = new ConcurrentHashMap<>();
    private volatile LockObservations observations;

    WithLockInterceptor(ObjectProvider<LockClient> locks, ObjectProvider<ObservationRegistry> observationRegistry,
                        BeanFactory beanFactory, StringValueResolver placeholders) {
        this.locks = locks;
        this.observationRegistry = observationRegistry;
        this.beanFactory = beanFactory;
        this.placeholders = placeholders;
    }

    /** Parses and checks the annotation of {@code method} on {@code targetClass}; throws what is wrong. */
    WithLockSpec spec(Method method, Class<?> targetClass) {
        return specs.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
            Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
            Annotation annotation = WithLockSpec.find(specific);
            if (annotation == null) {
                annotation = WithLockSpec.find(method);
            }
            return WithLockSpec.of(specific, targetClass, annotation, placeholders);
        });
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target == null ? invocation.getMethod().getDeclaringClass() : AopUtils.getTargetClass(target);
        WithLockSpec spec = spec(invocation.getMethod(), targetClass);
        String name = lockName(spec, invocation.getArguments());
        LockClient client = locks.getObject();
        Lease lease;
        if (spec.waitFor() == null) {
            lease = spec.side() == WithLockSpec.Side.PERMITS
                    ? observations().acquire(client.semaphore(name, spec.count()), spec.take())
                    : observations().acquire(lock(client, spec, name));
        } else {
            Optional<Lease> acquired = spec.side() == WithLockSpec.Side.PERMITS
                    ? observations().tryAcquire(client.semaphore(name, spec.count()), spec.take(), spec.waitFor())
                    : observations().tryAcquire(lock(client, spec, name), spec.waitFor());
            if (acquired.isEmpty()) {
                if (spec.onTimeout() == OnLockTimeout.SKIP) {
                    log.debug("{} skipped: lock '{}' was not free within {}", spec.description(), name, spec.waitFor());
                    return spec.emptyValue();
                }
                throw new LockTimeoutException(name, spec.waitFor(), spec.description());
            }
            lease = acquired.get();
        }
        LeaseStack.push(lease);
        try {
            return invocation.proceed();
        } finally {
            LeaseStack.pop();
            release(spec, lease);
        }
    }

    private static DistributedLock lock(LockClient client, WithLockSpec spec, String name) {
        return switch (spec.side()) {
            case READ -> client.readWriteLock(name).readLock();
            case WRITE -> client.readWriteLock(name).writeLock();
            default -> client.lock(name);
        };
    }

    private String lockName(WithLockSpec spec, Object[] arguments) {
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(null, spec.method(), arguments,
                parameterNames);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value = spec.name().getValue(context);
        if (value == null) {
            throw new IllegalArgumentException(spec.description() + ": the lock name '"
                    + spec.name().getExpressionString() + "' evaluated to null");
        }
        return value.toString();
    }

    private static void release(WithLockSpec spec, Lease lease) {
        try {
            if (lease.release() == ReleaseOutcome.LOST) {
                log.warn("{}: the lease on lock '{}' (token {}) was lost before the method ended", spec.description(),
                        lease.name(), lease.fencingToken());
            }
        } catch (LockException e) {
            // The method's result or exception stands; the lock expires on the server within its TTL.
            log.warn("{}: the release of lock '{}' was not confirmed; it expires within its TTL", spec.description(),
                    lease.name(), e);
        }
    }

    private LockObservations observations() {
        LockObservations o = observations;
        if (o == null) {
            o = new LockObservations(observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP));
            observations = o;
        }
        return o;
    }
}
