-- Warden ledger schema, version 2 (H2).

-- Request ids are unique per account: two accounts may use the same id, so an entry's key becomes
-- (account, request_id). Openings carried the key 'open:<account>'; they now carry an empty request
-- id (an account is opened once).
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pk;
UPDATE ledger_entries SET request_id = '' WHERE kind = 'open';
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_pk PRIMARY KEY (account, request_id);
-- The primary key now leads with the account.
DROP INDEX IF EXISTS ledger_entries_account;

-- A namespace prefixes the stream keys (up to 64 characters before 'quota:{pN}:journal').
ALTER TABLE ledger_entries ALTER COLUMN stream SET DATA TYPE VARCHAR(160);
ALTER TABLE ledger_compensations ALTER COLUMN stream SET DATA TYPE VARCHAR(160);
ALTER TABLE ledger_quarantine ALTER COLUMN stream SET DATA TYPE VARCHAR(160);

-- One row per partition stream: the fencing token of the consumer that owns it. Every batch updates
-- its row with "WHERE token <= <the batch's token>" first, in the batch's own transaction, so a
-- consumer that was paused and superseded (a newer owner recorded a higher token) has its batch
-- refused by the database itself, and two writers of one partition are serialised on this row.
CREATE TABLE ledger_partitions (
    stream     VARCHAR(160) NOT NULL,
    token      BIGINT       NOT NULL,
    owner      VARCHAR(200) NOT NULL,
    claimed_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT ledger_partitions_pk PRIMARY KEY (stream),
    CONSTRAINT ledger_partitions_token CHECK (token >= 0)
);
