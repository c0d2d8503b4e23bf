package dev.warden.quota.ledger.internal.consume;

/** The consumer logs under its public class's name, the category operators configure. */
final class Logs {

    static final String CONSUMER = "dev.warden.quota.ledger.LedgerConsumer";

    private Logs() {
    }
}
