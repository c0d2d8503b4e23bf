/**
 * The migration mode: one client's acquisitions take the lock on the backend it leaves, then on the
 * backend it moves to, so instances of neighbouring rollout steps exclude each other; the two
 * backends' tokens are tied through their token floors.
 */
package dev.warden.lock.internal.migration;
