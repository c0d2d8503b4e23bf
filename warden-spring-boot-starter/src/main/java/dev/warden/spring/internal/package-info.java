/**
 * Parts of the starter that its auto-configuration wires in: {@link Settings} turns Spring's bound
 * properties into Warden's settings map, so Warden itself checks every value; {@link OnLockBackendCondition}
 * decides whether a lock client is wanted; {@link CompositeLockObserver} tells every observer bean;
 * {@link ProbeHealthIndicator} reports health on Boot 4 with the line-neutral probes of
 * {@code dev.warden.spring.probe}. Internal to Warden: no compatibility promise.
 */
package dev.warden.spring.internal;
