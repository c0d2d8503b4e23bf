/**
 * How {@link dev.warden.reactor.ReactiveLock} keeps its promises: {@link dev.warden.reactor.internal.LeaseMono},
 * one acquisition per subscription whose lease is either delivered or released, and
 * {@link dev.warden.reactor.internal.Ending}, the three ways a critical section releases its lease and what it
 * then reports. Not an API: it may change in any release.
 */
package dev.warden.reactor.internal;
