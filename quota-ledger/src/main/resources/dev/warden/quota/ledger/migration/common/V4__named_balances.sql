-- Warden ledger schema, version 4 (PostgreSQL and H2 alike): named balances and their postings.

-- An account's named balances (plan quota, points, coupons...), beside its main balance in
-- ledger_accounts. A row appears with the balance's first posting: a balance the ledger has no row
-- for holds 0 (opening one in Redis is not journaled). Never below zero, like the main balance.
CREATE TABLE ledger_balances (
    account    VARCHAR(128) NOT NULL,
    name       VARCHAR(32)  NOT NULL,
    amount     BIGINT       NOT NULL,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT ledger_balances_pk PRIMARY KEY (account, name),
    CONSTRAINT ledger_balances_amount_non_negative CHECK (amount >= 0)
);

-- The lines of each posting: its entry in ledger_entries (kind 'post', amount 0: the main balance does
-- not move) is keyed (account, request_id) like a deduction's, and its lines hang off that key.
CREATE TABLE ledger_posting_lines (
    account    VARCHAR(128) NOT NULL,
    request_id VARCHAR(160) NOT NULL,
    name       VARCHAR(32)  NOT NULL,
    delta      BIGINT       NOT NULL,
    CONSTRAINT ledger_posting_lines_pk PRIMARY KEY (account, request_id, name),
    CONSTRAINT ledger_posting_lines_delta CHECK (delta <> 0)
);

ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind
    CHECK (kind IN ('open', 'topup', 'refund', 'deduct', 'hold', 'capture', 'release', 'expire', 'post'));
