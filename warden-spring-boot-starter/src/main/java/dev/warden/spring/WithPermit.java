package dev.warden.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method of a Spring bean holding permits of a Warden semaphore ({@code LockClient.semaphore}): at
 * most {@link #permits()} permits are held at once across every instance, and each call takes
 * {@link #take()} of them before it runs and gives them back after it returns or throws. Inside,
 * {@link CurrentLease#get()} is the permits' lease, with its own fencing token.
 *
 * <pre>{@code
 * @WithPermit(semaphore = "'exports'", permits = 4, waitFor = "10s")
 * public void export(Report report) { ... }
 * }</pre>
 *
 * <p>Everything {@link WithLock} says of its lock holds for the permits (the call only, timeouts, a lost
 * lease, ordering with other advice, calls through the proxy), except reentrancy: permits are not
 * reentrant, so a nested call takes more of them. Configure one count per semaphore name: each request
 * is judged by its own count.
 */
@Target({ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface WithPermit {

    /** The semaphore's name: a SpEL expression, as {@link WithLock#name()}. */
    String semaphore();

    /** The semaphore's permit count. */
    int permits();

    /** How many permits each call takes, 1 to {@link #permits()}. */
    int take() default 1;

    /** How long to wait for the permits, as {@link WithLock#waitFor()}. */
    String waitFor() default "";

    /** What happens when the wait runs out. */
    OnLockTimeout onTimeout() default OnLockTimeout.THROW;
}
