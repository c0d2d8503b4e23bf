/**
 * Examples to copy: small programs on Warden's public API alone, each readable top to bottom and
 * reading its servers from a settings file, system properties or the environment ({@link
 * dev.warden.examples.Config}). {@code quickstart} (a lock, the same code for every backend),
 * {@code charge} (a merchant charged under its lock), {@code export} (a long job kept alive by the lease
 * keeper) and {@code ledger} (journal into the database, then reconciliation). The demos that launch
 * servers and check invariants around them are test code ({@code src/test}, package
 * {@code dev.warden.examples.demo}).
 */
package dev.warden.examples;
