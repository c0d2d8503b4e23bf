package dev.warden.examples.spring;

/**
 * What a month-end settlement did before it finished or stopped.
 *
 * @param stepsDone    steps completed under a valid lease
 * @param steps        steps planned
 * @param lostReason   why the lease was lost, or null when it held to the end
 */
public record Settlement(String merchantId, long fencingToken, int stepsDone, int steps, String lostReason) {
}
