package dev.warden.quota;

import java.util.Objects;

/** One deduction of a batch ({@link QuotaService#deductAll(java.util.List)}). */
public record Deduction(String account, long amount, String requestId) {
    public Deduction {
        Objects.requireNonNull(account, "account");
        Objects.requireNonNull(requestId, "requestId");
    }
}
