-- Warden ledger schema, version 1 (PostgreSQL and H2 alike): the tables as the first release created them.
-- Applied by Flyway (Ledger.migrate or `ledger schema --migrate`); a ledger created before migrations
-- existed is recorded as this version without running it.

CREATE TABLE IF NOT EXISTS ledger_accounts (
    account     VARCHAR(128) NOT NULL,
    balance     BIGINT       NOT NULL,
    opened_at   TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at  TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT ledger_accounts_pk PRIMARY KEY (account),
    CONSTRAINT ledger_accounts_balance_non_negative CHECK (balance >= 0)
);

-- One row per applied journal entry. The request id is the primary key, so a redelivered entry is a
-- no-op; an opening has no request id and is keyed 'open:<account>' (':' never appears in a request
-- id). (stream, entry_ms, entry_seq) is the entry's position in its partition's journal stream.
CREATE TABLE IF NOT EXISTS ledger_entries (
    request_id    VARCHAR(160) NOT NULL,
    account       VARCHAR(128) NOT NULL,
    kind          VARCHAR(8)   NOT NULL,
    amount        BIGINT       NOT NULL,
    balance_after BIGINT       NOT NULL,
    token         BIGINT,
    stream        VARCHAR(64)  NOT NULL,
    entry_id      VARCHAR(48)  NOT NULL,
    entry_ms      BIGINT       NOT NULL,
    entry_seq     BIGINT       NOT NULL,
    recorded_at   TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT ledger_entries_pk PRIMARY KEY (request_id),
    CONSTRAINT ledger_entries_kind CHECK (kind IN ('open', 'topup', 'refund', 'deduct')),
    CONSTRAINT ledger_entries_amount CHECK (amount >= 0),
    CONSTRAINT ledger_entries_position UNIQUE (stream, entry_ms, entry_seq)
);

CREATE INDEX IF NOT EXISTS ledger_entries_account ON ledger_entries (account);

-- A second journal entry for a request id the ledger already holds: a retry that reached Redis after
-- its idempotency record expired, so Redis applied it again. The entry is applied here too (the
-- balance mirrors Redis), and the consumer credits (or debits) the amount back in Redis under
-- compensation_request_id; that compensation arrives as an ordinary entry and restores both sides.
CREATE TABLE IF NOT EXISTS ledger_compensations (
    stream                  VARCHAR(64)  NOT NULL,
    entry_id                VARCHAR(48)  NOT NULL,
    entry_ms                BIGINT       NOT NULL,
    entry_seq               BIGINT       NOT NULL,
    request_id              VARCHAR(160) NOT NULL,
    account                 VARCHAR(128) NOT NULL,
    kind                    VARCHAR(8)   NOT NULL,
    amount                  BIGINT       NOT NULL,
    balance_after           BIGINT       NOT NULL,
    token                   BIGINT,
    compensation_request_id VARCHAR(128) NOT NULL,
    compensation_kind       VARCHAR(8)   NOT NULL,
    outcome                 VARCHAR(32),
    recorded_at             TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    compensated_at          TIMESTAMP WITH TIME ZONE,
    CONSTRAINT ledger_compensations_pk PRIMARY KEY (stream, entry_ms, entry_seq),
    CONSTRAINT ledger_compensations_request UNIQUE (compensation_request_id)
);

-- Entries the database refused (a constraint failed, the account is unknown, the entry is
-- malformed): stored, never dropped, until someone resolves them. Text columns are unbounded so a
-- malformed entry is kept as it came.
CREATE TABLE IF NOT EXISTS ledger_quarantine (
    stream         VARCHAR(64) NOT NULL,
    entry_id       VARCHAR(48) NOT NULL,
    entry_ms       BIGINT      NOT NULL,
    entry_seq      BIGINT      NOT NULL,
    account        VARCHAR,
    kind           VARCHAR,
    amount         BIGINT,
    request_id     VARCHAR,
    balance_after  BIGINT,
    fields         VARCHAR     NOT NULL,
    reason         VARCHAR(32) NOT NULL,
    detail         VARCHAR     NOT NULL,
    quarantined_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    resolved_at    TIMESTAMP WITH TIME ZONE,
    resolution     VARCHAR,
    CONSTRAINT ledger_quarantine_pk PRIMARY KEY (stream, entry_ms, entry_seq)
);
