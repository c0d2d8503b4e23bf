package dev.warden.lock;

/**
 * How a fencing token orders grants across lock backends: first by the deployment's <b>fencing epoch</b>
 * ({@code warden.lock.fencing-epoch}), then by the backend's own token. The epoch sits in the high bits of
 * the one {@code long} a guarded resource stores, so a resource that keeps "the highest token seen" keeps
 * working unchanged:
 * <pre>
 *   token = epoch &lt;&lt; 53 | backend token        (epoch 0..1023, backend token 0 .. 2^53 - 1)
 * </pre>
 * Every backend's own token is below 2<sup>53</sup> and the kit checks it: Redis's are the server clock in
 * microseconds or the last token + 1 (below 2<sup>53</sup> until the year 2255), etcd's are revisions,
 * ZooKeeper's are zxids (below 2<sup>53</sup> while the ensemble has had fewer than 2<sup>21</sup> leader
 * elections), the memory backend's a counter. A grant whose token does not fit fails its acquisition
 * ({@link LockException.Reason#PROTOCOL}) rather than hand out a token that would compare wrongly.
 *
 * <p>Switching a deployment to another backend with the next epoch makes every token the new backend
 * grants exceed every token the old one ever granted: a resource refuses the old backend's holders from
 * the first write of a new holder on, and the quota engine's and the ledger's fences keep working. With
 * epoch 0 (the default) a token is the backend's own. The epoch must never go back: a lower epoch's
 * tokens are refused by every resource that saw a higher one.
 */
public final class FencingEpoch {

    /** The bits of a backend's own token. */
    public static final int BACKEND_TOKEN_BITS = 53;
    /** The largest backend token: 2^53 - 1. */
    public static final long MAX_BACKEND_TOKEN = (1L << BACKEND_TOKEN_BITS) - 1;
    /** The largest epoch: the 10 bits above the backend token, below the sign. */
    public static final int MAX_EPOCH = (1 << (63 - BACKEND_TOKEN_BITS)) - 1;

    private FencingEpoch() {
    }

    /**
     * The token a lease shows for a backend's token under {@code epoch}.
     *
     * @throws IllegalArgumentException when the epoch or the backend token is out of range
     */
    public static long compose(int epoch, long backendToken) {
        if (epoch < 0 || epoch > MAX_EPOCH) {
            throw new IllegalArgumentException("fencing epoch " + epoch + " is not 0.." + MAX_EPOCH);
        }
        if (!fits(backendToken)) {
            throw new IllegalArgumentException("backend token " + backendToken + " is not 0.." + MAX_BACKEND_TOKEN);
        }
        return ((long) epoch << BACKEND_TOKEN_BITS) | backendToken;
    }

    /** Whether a backend's token fits below the epoch: 0 .. 2^53 - 1. */
    public static boolean fits(long backendToken) {
        return backendToken >= 0 && backendToken <= MAX_BACKEND_TOKEN;
    }

    /** The epoch of a lease's token. */
    public static int epochOf(long token) {
        return (int) (token >>> BACKEND_TOKEN_BITS);
    }

    /** The backend's own token within a lease's token. */
    public static long backendTokenOf(long token) {
        return token & MAX_BACKEND_TOKEN;
    }
}
