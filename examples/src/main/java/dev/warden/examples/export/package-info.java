/**
 * The long export job, run with {@code ./demo.sh export-job}: {@link ExportJob} holds one lock for
 * several times its TTL while the lease keeper renews it, and stops at once when the lease is lost;
 * {@code --lose-after} takes the lock away behind its back, so the stop can be watched.
 */
package dev.warden.examples.export;
