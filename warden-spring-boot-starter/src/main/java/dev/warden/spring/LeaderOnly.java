package dev.warden.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method only on the instance that leads the named election, and skips it (returns at once)
 * everywhere else: a scheduled job that one instance of a fleet runs at a time, with a term it can fence
 * with. Each application context stands once per election name, as soon as its singletons are created,
 * with the candidate id {@code warden.election.candidate-id} (default: {@code spring.application.name}, or
 * {@code app}, at the host name and process id); it leaves when the context (and so the lock client)
 * closes. While a call runs, {@link CurrentLease#get()} is the leadership lease: its token is the term.
 *
 * <p>The method must return {@code void} (a skipped call has nothing to return); start-up fails naming a
 * method that does not, or a {@code @LeaderOnly} method without a lock client bean.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

    /** The election's name; {@code ${...}} placeholders are resolved. */
    String value();
}
