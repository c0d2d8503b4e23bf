package dev.warden.lock.redis.internal;

/**
 * The Redis names of one shared name (a semaphore's or a read-write lock's). All four start with the
 * hash tag {@code {<namespace>:<name>}}, as a lock's {@link Keys} do, so one script touches one Cluster
 * slot and the channel lives in that slot's shard. Their suffixes start with {@code shared:} and hold no
 * {@code '}'}, so none equals a lock's key or the shared key of another name, whatever braces the names
 * hold: a lock and a shared name of the same name never see each other. None ends in {@code }:lock},
 * so listing a namespace's holders ({@link HolderScan}) never picks them up.
 *
 * @param queue a sorted set of the entries' ids, scored by their tokens: arrival order
 * @param entries a hash: entry id ({@code <owner>#<attempt>}) to {@code <token>|<weight>|<limit>|<expires
 *        at, ms of the server's clock>|<granted 1/0>|<removals its last poll saw>}, and the field
 *        {@code totals} (no entry id ends without {@code #<digits>}): {@code <sum of the weights>|<removals
 *        since the queue was last empty>}, which spare most polls reading the entries ahead
 *        (shared-poll.lua)
 * @param fence the last token taken, never expiring so tokens never go back
 * @param channel the pub/sub channel a release, an abandon or a purge of expired entries publishes on
 */
record SharedKeys(String queue, String entries, String fence, String channel) {

    static SharedKeys of(String namespace, String name) {
        String tag = "{" + namespace + ":" + name + "}";
        return new SharedKeys(tag + ":shared:queue", tag + ":shared:entries", tag + ":shared:fence",
                tag + ":shared:changed");
    }
}
