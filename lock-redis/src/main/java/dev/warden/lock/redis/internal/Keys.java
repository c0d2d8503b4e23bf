package dev.warden.lock.redis.internal;

/**
 * The Redis names of one lock. All six start with the hash tag {@code {<namespace>:<name>}}, so
 * Redis Cluster puts the lock and its fence counter in one slot and one script may touch both.
 * The tag ends at the first {@code '}'}, which lies at the same place in all six even when the
 * name contains braces, and the suffixes differ, so no two locks share a name.
 *
 * @param lock the lock key: {@code owner:token} with the lease TTL
 * @param fence the fencing counter, never expiring so tokens never go back
 * @param channel the pub/sub channel a release publishes on
 * @param waiting set for a short while by every acquire that finds the lock held: while it exists
 *        a release never hands the lock straight to its own client's next contender
 * @param contenders the pub/sub channel every acquire that finds the lock held publishes on: a client
 *        that keeps the lock after its release (lease caching) listens there and lets go
 * @param evicted the token of the last hold an operator ended, for twice the TTL: its holder's next
 *        renewal reads it to learn it was forced out
 */
record Keys(String lock, String fence, String channel, String waiting, String evicted, String contenders) {

    static Keys of(String namespace, String name) {
        String tag = "{" + namespace + ":" + name + "}";
        return new Keys(tag + ":lock", tag + ":fence", tag + ":released", tag + ":waiting", tag + ":evicted", tag + ":contenders");
    }
}
