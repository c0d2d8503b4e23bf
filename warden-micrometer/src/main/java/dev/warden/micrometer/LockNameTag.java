package dev.warden.micrometer;

/**
 * Whether lock meters carry the lock's name as a tag. Names are usually per merchant, order or job, so
 * a tag per name means a time series per name: leave it {@link #OMIT} unless the names are few and fixed.
 */
public enum LockNameTag {
    /** Meters aggregate every lock of the client (the default). */
    OMIT,
    /** Meters carry {@code lock=<name>}: one time series per lock name. */
    INCLUDE
}
