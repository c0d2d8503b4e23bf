/**
 * A lock client's settings, read and checked before anything connects: {@link Settings} parses and
 * validates every {@code warden.lock.*} setting, finds the one provider of the backend, and reports
 * every problem in one {@link dev.warden.lock.LockException}; the result is a {@link ClientSettings}.
 * {@link Durations} and {@link LockNames} hold the rules for durations and lock names. Depends on
 * nothing else in lock-api's internals. Internal to Warden: no compatibility promise.
 */
package dev.warden.lock.internal.config;
