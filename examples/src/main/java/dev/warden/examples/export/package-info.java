/**
 * The long job: {@link dev.warden.examples.export.ExportJob} holds one lock for many times its TTL
 * while the lease keeper renews it, and stops at once when the lease is lost.
 */
package dev.warden.examples.export;
