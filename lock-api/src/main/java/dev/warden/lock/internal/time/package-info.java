/**
 * The clock seam: {@link Timekeeper} is the one place lock-api reads time and arms timers (validity
 * deadlines, renewals, acquisition deadlines, retry backoffs), so tests can drive the timing rules with
 * a virtual clock in milliseconds instead of waiting them out; {@link SystemTimekeeper} is the one
 * production uses. lock-api's architecture test keeps the system clocks and scheduled executors out of
 * every other class but {@code Await}, which bounds real-time blocking. Internal to Warden: no
 * compatibility promise.
 */
package dev.warden.lock.internal.time;
