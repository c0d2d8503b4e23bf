/**
 * The demos behind {@code ./demo.sh}: test harnesses around the copyable programs of
 * {@code src/main}. They launch servers (testkit), make load, take locks away, check invariants and
 * set exit codes, which is why they live beside the tests. {@link dev.warden.examples.demo.BillingDemo}
 * (three channels charging merchants; {@link dev.warden.examples.demo.Invariants} checks the money),
 * {@link dev.warden.examples.demo.ExportJobDemo} (the long job, and {@code --lose-after}) and
 * {@link dev.warden.examples.demo.QuickStartDemo} ({@code --embedded}).
 */
package dev.warden.examples.demo;
