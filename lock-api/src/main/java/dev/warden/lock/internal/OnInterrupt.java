package dev.warden.lock.internal;

/** What a blocking acquisition does when its thread is interrupted. */
enum OnInterrupt {
    /** Give the wait up: {@code LockException} {@code INTERRUPTED}, flag restored ({@code acquire()}, {@code tryAcquire}). */
    GIVE_UP,
    /** Keep waiting and restore the flag afterwards ({@link java.util.concurrent.locks.Lock#lock()}, {@code tryLock()}). */
    KEEP_WAITING
}
