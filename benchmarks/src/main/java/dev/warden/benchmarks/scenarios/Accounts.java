package dev.warden.benchmarks.scenarios;

/** Which accounts a quota workload charges: one hot account, or many spread evenly. */
public enum Accounts {
    HOT(1), SPREAD(1_000);

    /** Enough that no run can exhaust an account, so every deduction applies. */
    public static final long INITIAL = 1L << 40;

    private final int count;

    Accounts(int count) {
        this.count = count;
    }

    public int count() {
        return count;
    }

    public String label() {
        return this == HOT ? "one hot account" : count + " accounts";
    }

    public String account(int i) {
        return account("acct", i);
    }

    /** Accounts of one workload: fencing high-water marks of one lock backend must not meet another's tokens. */
    public String account(String prefix, int i) {
        return prefix + "-" + (i % count);
    }
}
