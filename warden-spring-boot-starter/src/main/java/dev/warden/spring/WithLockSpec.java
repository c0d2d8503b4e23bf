package dev.warden.spring;

import dev.warden.lock.WardenSettings;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringValueResolver;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

/**
 * One {@link WithLock}, {@link WithReadLock}, {@link WithWriteLock} or {@link WithPermit} method, checked and
 * parsed once: at start-up, so a mistake fails the application rather than the first call.
 *
 * @param waitFor null to wait as long as it takes
 * @param side what the call holds
 * @param take the permits each call takes ({@link Side#PERMITS} only)
 * @param count the semaphore's permit count ({@link Side#PERMITS} only)
 */
record WithLockSpec(Method method, String description, Expression name, Duration waitFor, OnLockTimeout onTimeout,
                    Side side, int take, int count) {

    /** What a call holds. */
    enum Side { LOCK, READ, WRITE, PERMITS }

    /** The annotations this spec reads; a method carries at most one of them. */
    static final List<Class<? extends Annotation>> ANNOTATIONS =
            List.of(WithLock.class, WithReadLock.class, WithWriteLock.class, WithPermit.class);

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    /** The one lock annotation on {@code method}, or null; two of them are a mistake. */
    static Annotation find(Method method) {
        Annotation found = null;
        for (Class<? extends Annotation> type : ANNOTATIONS) {
            Annotation a = AnnotatedElementUtils.findMergedAnnotation(method, type);
            if (a != null && found != null) {
                throw new IllegalStateException("method " + method.getDeclaringClass().getSimpleName() + "."
                        + method.getName() + " carries both @" + found.annotationType().getSimpleName() + " and @"
                        + type.getSimpleName() + "; use one");
            }
            found = a != null ? a : found;
        }
        return found;
    }

    static WithLockSpec of(Method method, Class<?> targetClass, Annotation annotation, StringValueResolver placeholders) {
        String description = "@" + annotation.annotationType().getSimpleName() + " method " + targetClass.getSimpleName()
                + "." + method.getName();
        Side side;
        String rawName;
        String rawWaitFor;
        OnLockTimeout onTimeout;
        int take = 0;
        int count = 0;
        if (annotation instanceof WithLock a) {
            side = Side.LOCK;
            rawName = a.name();
            rawWaitFor = a.waitFor();
            onTimeout = a.onTimeout();
        } else if (annotation instanceof WithReadLock a) {
            side = Side.READ;
            rawName = a.name();
            rawWaitFor = a.waitFor();
            onTimeout = a.onTimeout();
        } else if (annotation instanceof WithWriteLock a) {
            side = Side.WRITE;
            rawName = a.name();
            rawWaitFor = a.waitFor();
            onTimeout = a.onTimeout();
        } else {
            WithPermit a = (WithPermit) annotation;
            side = Side.PERMITS;
            rawName = a.semaphore();
            rawWaitFor = a.waitFor();
            onTimeout = a.onTimeout();
            take = a.take();
            count = a.permits();
            if (count < 1 || take < 1 || take > count) {
                throw new IllegalStateException(description + ": permits = " + count + ", take = " + take
                        + "; a call takes 1 to permits (at least 1) permits");
            }
        }
        Expression name;
        try {
            name = PARSER.parseExpression(rawName);
        } catch (ParseException e) {
            throw new IllegalStateException(description + ": name '" + rawName
                    + "' is not a SpEL expression: " + e.getMessage(), e);
        }
        Duration wait = null;
        String rawWait = rawWaitFor.trim();
        if (!rawWait.isEmpty()) {
            String resolved = placeholders == null ? rawWait : placeholders.resolveStringValue(rawWait);
            try {
                wait = WardenSettings.duration(resolved == null ? "" : resolved.trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(description + ": waitFor '" + rawWait + "' is not a duration"
                        + " (write " + WardenSettings.DURATION_FORMS + ")", e);
            }
            if (wait.isNegative()) {
                throw new IllegalStateException(description + ": waitFor '" + rawWait + "' is negative");
            }
        }
        Class<?> returns = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(returns) || Future.class.isAssignableFrom(returns)
                || isPublisher(returns)) {
            throw new IllegalStateException(description + " returns " + returns.getSimpleName()
                    + ": the lock spans the call only and its work would outlive it; take the lock inside the work"
                    + " (LockClient.lock(name).acquireAsync()) instead");
        }
        if (onTimeout == OnLockTimeout.SKIP && returns.isPrimitive() && returns != void.class) {
            throw new IllegalStateException(description + " returns " + returns.getName()
                    + ", which has no empty value for onTimeout = SKIP; return void, an object or an Optional");
        }
        return new WithLockSpec(method, description, name, wait, onTimeout, side, take, count);
    }

    /** What a skipped call returns. */
    Object emptyValue() {
        Class<?> returns = method.getReturnType();
        if (returns == Optional.class) {
            return Optional.empty();
        }
        if (returns == OptionalLong.class) {
            return OptionalLong.empty();
        }
        if (returns == OptionalInt.class) {
            return OptionalInt.empty();
        }
        if (returns == OptionalDouble.class) {
            return OptionalDouble.empty();
        }
        return null;
    }

    private static boolean isPublisher(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals("org.reactivestreams.Publisher")) {
                return true;
            }
            for (Class<?> i : c.getInterfaces()) {
                if (isPublisher(i)) {
                    return true;
                }
            }
        }
        return false;
    }
}
