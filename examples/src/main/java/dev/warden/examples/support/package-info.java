/**
 * What the examples share, none of it Warden's API: embedded servers from testkit when no endpoint is
 * given ({@link Servers}, {@link LockEndpoints}), settings files ({@link SettingsFile}), durations on
 * the command line ({@link DurationConverter}), closing what was started, last first
 * ({@link Closer}), a readable terminal ({@link QuietLogging}, {@link Interrupts}), and
 * {@link SetupException} for a set-up failure reported without a stack trace.
 */
package dev.warden.examples.support;
