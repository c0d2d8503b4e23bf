package dev.warden.spring;

import dev.warden.lock.LockClient;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.List;

/**
 * Makes {@link WithLock}, {@link WithReadLock}, {@link WithWriteLock} and {@link WithPermit} work: proxies
 * beans with such methods, after checking each
 * annotation; a mistake fails the start-up naming the method, and so does a {@code @WithLock} method
 * without a {@link LockClient} bean to take its lock (rather than running it unlocked). The advice goes
 * before any other on the bean, so the lock wraps transactions. The starter's auto-configuration
 * registers it; a Spring application without Boot declares it as a {@code static} {@code @Bean}.
 */
public final class WithLockPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final long serialVersionUID = 1L;

    private transient WithLockInterceptor interceptor;
    private transient ListableBeanFactory beans;

    public WithLockPostProcessor() {
        setBeforeExistingAdvisors(true);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beans = (ListableBeanFactory) beanFactory;
        this.interceptor = new WithLockInterceptor(beanFactory.getBeanProvider(LockClient.class),
                beanFactory.getBeanProvider(ObservationRegistry.class), beanFactory,
                beanFactory instanceof ConfigurableBeanFactory c ? new EmbeddedValueResolver(c) : null);
        ComposablePointcut any = null;
        for (Class<? extends Annotation> type : WithLockSpec.ANNOTATIONS) {
            AnnotationMatchingPointcut one = new AnnotationMatchingPointcut(null, type, true);
            any = any == null ? new ComposablePointcut(one) : any.union(one);
        }
        this.advisor = new DefaultPointcutAdvisor(any, interceptor);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        if (WithLockSpec.ANNOTATIONS.stream().noneMatch(type -> AnnotationUtils.isCandidateClass(targetClass, type))) {
            // java.* and the like cannot carry the annotation: no need to look at their methods.
            return bean;
        }
        List<String> annotated = new ArrayList<>();
        ReflectionUtils.doWithMethods(targetClass, method -> {
            Annotation found = WithLockSpec.find(method);
            if (found != null) {
                interceptor.spec(method, targetClass);
                annotated.add("@" + found.annotationType().getSimpleName() + " on " + targetClass.getSimpleName() + "."
                        + method.getName());
            }
        });
        if (!annotated.isEmpty() && beans.getBeanNamesForType(LockClient.class, true, false).length == 0) {
            throw new IllegalStateException(annotated.get(0) + " needs a LockClient bean, and there is none: set warden.lock.backend and warden.lock.endpoints"
                    + " (and add a backend module such as lock-redis), or leave warden.lock.enabled unset");
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }
}
