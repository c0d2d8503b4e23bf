/**
 * The quota engine over a Redis client its caller owns: {@link dev.warden.quota.shared.QuotaServices}.
 * Above the engine's internals and its Redis layer ({@code redis}); nothing in quota-core depends on it.
 */
package dev.warden.quota.shared;
