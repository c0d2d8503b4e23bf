package dev.warden.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method of a Spring bean under a Warden lock: the lock named by {@link #name()} is acquired
 * before the method runs and released after it returns or throws. Inside, {@link CurrentLease#get()}
 * is the lease, with its fencing token to pass to the guarded resource.
 *
 * <pre>{@code
 * @WithLock(name = "'merchant:' + #merchantId", waitFor = "2s")
 * public Receipt charge(String merchantId, long amount) {
 *     long token = CurrentLease.get().fencingToken();
 *     ...
 * }
 * }</pre>
 *
 * <p>Semantics:
 * <ul>
 *   <li>The lock spans the call only: a method returning a {@code CompletionStage}, {@code Future} or a
 *       reactive {@code Publisher} is refused at start-up (its work would outlive the lock).</li>
 *   <li>When the wait runs out: {@link OnLockTimeout#THROW} (the default) throws
 *       {@link LockTimeoutException} (a {@code LockException} with reason {@code TIMEOUT}) and the method does
 *       not run; {@link OnLockTimeout#SKIP} does not run it and returns {@code null}, an empty
 *       {@code Optional}/{@code OptionalLong}/..., or nothing for {@code void} (a primitive return type
 *       is refused at start-up).</li>
 *   <li>A lease lost while the method runs is not an exception: {@link dev.warden.lock.Lease#isValid()}
 *       turns false and {@link dev.warden.lock.Lease#onLost} listeners are told at once; the method
 *       decides (and a fenced write refuses its token anyway). The release afterwards reports it in the
 *       log and in the {@code warden.lock.lost} meter.</li>
 *   <li>A release the server does not confirm is logged; the lock expires within its TTL. It never
 *       replaces the method's result or exception.</li>
 *   <li>The lock wraps every other advice on the bean ({@code @Transactional} included): it is taken
 *       before a transaction begins and released after it commits.</li>
 *   <li>Calls through the Spring proxy only, as with every annotation-driven advice: a call from
 *       inside the same bean ({@code this.charge(...)}) takes no lock.</li>
 *   <li>Acquisitions are reentrant per thread, as Warden's are: a nested call for the same name shares
 *       the lease and its token.</li>
 * </ul>
 * Mistakes in the annotation (an expression that does not parse, a wait that is not a duration,
 * {@code SKIP} on a primitive return type) fail the application's start-up, naming the method.
 */
@Target({ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface WithLock {

    /**
     * The lock name: a SpEL expression over the method's arguments, by name ({@code #merchantId}, which
     * needs classes compiled with {@code -parameters}, as Spring Boot's build plugins do) or by position
     * ({@code #p0}, {@code #a0}); {@code @beanName} reaches beans. A literal needs quotes:
     * {@code "'nightly-export'"}. The value must not be null; it is then checked like every lock name.
     */
    String name();

    /**
     * How long to wait for the lock: {@code 500ms}, {@code 2s}, {@code 1m}, ISO-8601 ({@code PT2S}), or a
     * {@code ${placeholder}} resolved from the environment. Empty (the default) waits as long as it takes;
     * {@code 0s} tries once.
     */
    String waitFor() default "";

    /** What happens when the wait runs out. */
    OnLockTimeout onTimeout() default OnLockTimeout.THROW;
}
