package dev.warden.spring;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LeadershipListener;
import dev.warden.lock.LockClient;
import dev.warden.lock.StepDown;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ReflectionUtils;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes {@link LeaderOnly} work: proxies beans with {@code @LeaderOnly} methods after checking each one
 * (void, and a lock client to elect with), stands in each named election once the singletons exist,
 * and runs a call only while this instance leads. The starter's auto-configuration registers it; a
 * Spring application without Boot declares it as a {@code static} {@code @Bean}.
 *
 * <p>Concurrency: {@code elections} is a concurrent map written at start-up; a call reads it.
 */
public final class LeaderOnlyPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton, EnvironmentAware {

    private static final long serialVersionUID = 1L;
    private static final Logger log = LoggerFactory.getLogger(LeaderOnlyPostProcessor.class);

    /** Election name (resolved) to this context's candidacy in it; null values until the singletons exist. */
    private final transient Map<String, Optional<Candidacy>> elections = new ConcurrentHashMap<>();
    private transient ListableBeanFactory beans;
    private transient EmbeddedValueResolver placeholders;
    private transient Environment environment;

    public LeaderOnlyPostProcessor() {
        setBeforeExistingAdvisors(true);
        MethodInterceptor interceptor = this::invoke;
        this.advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, LeaderOnly.class, true), interceptor);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beans = (ListableBeanFactory) beanFactory;
        this.placeholders = beanFactory instanceof ConfigurableBeanFactory c ? new EmbeddedValueResolver(c) : null;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (!AnnotationUtils.isCandidateClass(targetClass, LeaderOnly.class)) {
            return bean;
        }
        ReflectionUtils.doWithMethods(targetClass, method -> {
            LeaderOnly leaderOnly = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
            if (leaderOnly == null) {
                return;
            }
            String where = "@LeaderOnly on " + targetClass.getSimpleName() + "." + method.getName();
            if (method.getReturnType() != void.class) {
                throw new IllegalStateException(where + " must return void: a call skipped on an instance that does not lead"
                        + " has nothing to return");
            }
            if (beans.getBeanNamesForType(LockClient.class, true, false).length == 0) {
                throw new IllegalStateException(where + " needs a LockClient bean to elect with, and there is none: set"
                        + " warden.lock.backend and warden.lock.endpoints (and add a backend module such as lock-redis)");
            }
            elections.putIfAbsent(election(leaderOnly), Optional.empty());
        });
        return super.postProcessAfterInitialization(bean, beanName);
    }

    /** Stands in every election a {@code @LeaderOnly} method names, once every singleton exists. */
    @Override
    public void afterSingletonsInstantiated() {
        if (elections.isEmpty()) {
            return;
        }
        LockClient locks = beans.getBean(LockClient.class);
        String candidate = candidateId();
        for (String name : elections.keySet()) {
            elections.put(name, Optional.of(locks.election(name).join(candidate, new Logged(name, candidate))));
        }
    }

    private Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        LeaderOnly leaderOnly = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
        if (leaderOnly == null && invocation.getThis() != null) {
            Method specific = AopUtils.getMostSpecificMethod(method, invocation.getThis().getClass());
            leaderOnly = AnnotatedElementUtils.findMergedAnnotation(specific, LeaderOnly.class);
        }
        if (leaderOnly == null) {
            return invocation.proceed();
        }
        Optional<Lease> leadership = elections.getOrDefault(election(leaderOnly), Optional.empty())
                .flatMap(Candidacy::leadership).filter(Lease::isValid);
        if (leadership.isEmpty()) {
            log.debug("{} skipped: this instance does not lead election '{}'", method.getName(), election(leaderOnly));
            return null;
        }
        LeaseStack.push(leadership.get());
        try {
            return invocation.proceed();
        } finally {
            LeaseStack.pop();
        }
    }

    private String election(LeaderOnly leaderOnly) {
        return placeholders == null ? leaderOnly.value() : placeholders.resolveStringValue(leaderOnly.value());
    }

    private String candidateId() {
        String configured = environment == null ? null : environment.getProperty("warden.election.candidate-id");
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        String app = environment == null ? "app" : environment.getProperty("spring.application.name", "app");
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "unknown-host";
        }
        return app + "@" + host + ":" + ManagementFactory.getRuntimeMXBean().getPid();
    }

    /** Logs each term: when leading starts and ends matters to whoever reads why a job ran where. */
    private record Logged(String election, String candidate) implements LeadershipListener {
        @Override
        public void elected(Lease leadership) {
            log.info("'{}' leads election '{}' in term {}", candidate, election, leadership.fencingToken());
        }

        @Override
        public void stepped(long term, StepDown why, LeaseLost lost) {
            log.info("'{}' stopped leading election '{}' in term {}: {}", candidate, election, term, why);
        }
    }
}
