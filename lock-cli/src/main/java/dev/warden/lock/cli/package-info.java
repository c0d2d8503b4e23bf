/** The operator's command line for locks: {@link dev.warden.lock.cli.LockCli}. */
package dev.warden.lock.cli;
