package dev.warden.spring;

import dev.warden.lock.WardenSettings;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringValueResolver;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

/**
 * One {@link WithLock} method, checked and parsed once: at start-up, so a mistake fails the application
 * rather than the first call.
 *
 * @param waitFor null to wait as long as it takes
 */
record WithLockSpec(Method method, String description, Expression name, Duration waitFor, OnLockTimeout onTimeout) {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    static WithLockSpec of(Method method, Class<?> targetClass, WithLock annotation, StringValueResolver placeholders) {
        String description = "@WithLock method " + targetClass.getSimpleName() + "." + method.getName();
        Expression name;
        try {
            name = PARSER.parseExpression(annotation.name());
        } catch (ParseException e) {
            throw new IllegalStateException(description + ": name '" + annotation.name()
                    + "' is not a SpEL expression: " + e.getMessage(), e);
        }
        Duration wait = null;
        String rawWait = annotation.waitFor().trim();
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
        if (annotation.onTimeout() == OnLockTimeout.SKIP && returns.isPrimitive() && returns != void.class) {
            throw new IllegalStateException(description + " returns " + returns.getName()
                    + ", which has no empty value for onTimeout = SKIP; return void, an object or an Optional");
        }
        return new WithLockSpec(method, description, name, wait, annotation.onTimeout());
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
