package dev.warden.examples.charge;

import dev.warden.examples.Config;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Charging a merchant: {@link QuotaService#charge} takes the merchant's lock, reads the balance, asks
 * the pricing step for the amount, deducts it carrying the lease's fencing token in one Redis Lua
 * script, and releases. What keeps the money right is the script's balance check, not the lock: the
 * lock only spares a charge from being priced on a balance that changes under it.
 *
 * <p>Settings ({@code examples/config/quota/billing.properties}): {@code warden.quota.endpoint}, the lock a
 * charge takes ({@code warden.quota.lock}: {@code redis}, {@code etcd}, {@code zookeeper} or
 * {@code none}) and its {@code warden.lock.*} settings.
 *
 * <pre>
 * java dev.warden.examples.charge.ChargeMerchant examples/config/quota/billing.properties merchant-42 5
 * </pre>
 * Exit code: 0 charged, 1 refused (the outcome says why), 2 usage, 3 the engine could not do it.
 */
public final class ChargeMerchant {

    /** A new merchant's plan, in quota units. */
    public static final long PLAN = 1_000;

    private ChargeMerchant() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out));
    }

    /** {@code <settings file> [merchant] [price]}; returns the exit code. */
    public static int run(String[] args, PrintStream out) {
        if (args.length < 1 || args.length > 3) {
            out.println("usage: ChargeMerchant <settings file> [merchant] [price]");
            return 2;
        }
        Map<String, Object> settings = Config.load(args[0]);
        String merchant = args.length > 1 ? args[1] : "merchant-42";
        long price = args.length > 2 ? Long.parseLong(args[2]) : 5;
        try (QuotaService quota = QuotaService.create(settings)) {
            // Once per merchant in a real service; here, so the example runs on an empty Redis.
            Outcome opened = quota.open(merchant, PLAN);
            out.printf("%s: %s%n", merchant, opened instanceof Outcome.Applied ? "plan opened with " + PLAN + " units"
                    : "plan already open");

            // The caller makes one request id per charge, and retries with the same one (after a timeout, say).
            String requestId = "order-" + UUID.randomUUID();
            Outcome charged = charge(quota, merchant, price, requestId);
            out.printf("charge %s: %s%n", requestId, describe(charged));
            Outcome retried = charge(quota, merchant, price, requestId);
            out.printf("the same request again: %s%n", describe(retried));
            return charged instanceof Outcome.Applied ? 0 : 1;
        } catch (QuotaException e) {
            // LOCK_TIMEOUT (the merchant's lock stayed busy), LOCK_FAILED, UNAVAILABLE, CONFIGURATION, ...
            out.printf("could not charge %s: %s (%s)%n", merchant, e.getMessage(), e.reason());
            return e.reason() == QuotaException.Reason.CONFIGURATION ? 2 : 3;
        }
    }

    /** One charge at {@code listPrice}, under the merchant's lock when one is configured. */
    public static Outcome charge(QuotaService quota, String merchant, long listPrice, String requestId) {
        return quota.charge(merchant, requestId, balance -> price(listPrice, balance));
    }

    /**
     * The pricing step, run under the lock with the balance just read: the list price, except that the
     * last units of a plan are charged as they are (a 5-unit call with 3 units left takes 3), so a plan
     * ends at exactly zero. An empty plan is priced in full, and the script refuses it.
     */
    public static long price(long listPrice, long balance) {
        return balance > 0 ? Math.min(listPrice, balance) : listPrice;
    }

    /** One line for people, per kind of outcome. */
    public static String describe(Outcome outcome) {
        if (outcome instanceof Outcome.Applied a) {
            return "applied, balance now " + a.balance();
        } else if (outcome instanceof Outcome.Duplicate d) {
            return "duplicate: already applied once (balance then " + d.original().balance() + "), nothing charged";
        } else if (outcome instanceof Outcome.Insufficient i) {
            return "refused: insufficient quota (balance " + i.balance() + ")";
        } else if (outcome instanceof Outcome.StaleFence f) {
            return "refused: a newer lock holder has written (token " + f.token() + " < " + f.highWaterMark() + ")";
        } else if (outcome instanceof Outcome.AccountNotFound) {
            return "refused: no such merchant";
        }
        return outcome.status().name().toLowerCase(Locale.ROOT) + ": " + outcome;
    }
}
