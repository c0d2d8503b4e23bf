/**
 * What the demo harnesses share, none of it Warden's API and none of it for copying: embedded servers
 * from testkit when no endpoint is given ({@link dev.warden.examples.demo.support.Servers},
 * {@link dev.warden.examples.demo.support.LockEndpoints}), the billing demo's ledger database
 * ({@link dev.warden.examples.demo.support.LedgerDatabase}), settings files
 * ({@link dev.warden.examples.demo.support.SettingsFile}), durations on the command line
 * ({@link dev.warden.examples.demo.support.DurationConverter}), closing what was started, last first
 * ({@link dev.warden.examples.demo.support.Closer}), a readable terminal
 * ({@link dev.warden.examples.demo.support.QuietLogging}, {@link dev.warden.examples.demo.support.Interrupts}),
 * and {@link dev.warden.examples.demo.support.SetupException} for a set-up failure reported without a
 * stack trace.
 */
package dev.warden.examples.demo.support;
