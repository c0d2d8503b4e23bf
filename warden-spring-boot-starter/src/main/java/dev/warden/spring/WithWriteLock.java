package dev.warden.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method of a Spring bean under the write side of a Warden read-write lock
 * ({@code LockClient.readWriteLock(name).writeLock()}): alone, with no reader or other writer.
 * Everything {@link WithLock} says of its lock holds here; a nested call for the same name re-enters the
 * same side, and one for the other side fails with {@link IllegalStateException} (it would wait for
 * itself). Writers are not starved by readers: a waiting writer holds back the readers that arrive after it.
 */
@Target({ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface WithWriteLock {

    /** The read-write lock's name: a SpEL expression, as {@link WithLock#name()}. */
    String name();

    /** How long to wait, as {@link WithLock#waitFor()}. */
    String waitFor() default "";

    /** What happens when the wait runs out. */
    OnLockTimeout onTimeout() default OnLockTimeout.THROW;
}
