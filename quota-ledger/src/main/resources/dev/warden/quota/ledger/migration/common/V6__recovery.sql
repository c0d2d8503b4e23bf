-- Warden ledger schema, version 6 (PostgreSQL and H2 alike): what bootstrap needs to bring Redis back
-- whole after it lost its data, and refused compensations that wait for a person.

-- The open holds, so bootstrap restores them (amount and expiry) with the quota they hold, rather than
-- freeing it: a hold's entry now carries its expiry. A hold leaves this table with its capture, release
-- or expiry. Holds journaled before this version have no recorded expiry (NULL): bootstrap restores them
-- as due, so the next sweep returns their quota, as it came back before.
CREATE TABLE ledger_holds (
    account    VARCHAR(128) NOT NULL,
    hold_id    VARCHAR(128) NOT NULL,
    amount     BIGINT       NOT NULL,
    expires_ms BIGINT,
    CONSTRAINT ledger_holds_pk PRIMARY KEY (account, hold_id),
    CONSTRAINT ledger_holds_amount CHECK (amount > 0)
);

INSERT INTO ledger_holds (account, hold_id, amount, expires_ms)
SELECT h.account, SUBSTRING(h.request_id FROM 6), h.amount, NULL
FROM ledger_entries h
WHERE h.kind = 'hold' AND NOT EXISTS (
    SELECT 1 FROM ledger_entries e WHERE e.account = h.account
    AND e.request_id IN ('capture:' || SUBSTRING(h.request_id FROM 6), 'release:' || SUBSTRING(h.request_id FROM 6),
                         'expire:' || SUBSTRING(h.request_id FROM 6)));

-- The highest fencing token of the account's journaled deductions, so bootstrap restores the fence mark
-- (a superseded lock holder stays refused after Redis lost its data).
ALTER TABLE ledger_accounts ADD COLUMN fence BIGINT;
UPDATE ledger_accounts SET fence = (SELECT MAX(e.token) FROM ledger_entries e WHERE e.account = ledger_accounts.account);

-- A compensation Redis refused (the replayed money was spent meanwhile) leaves both sides holding the
-- replay: reconciliation reports it as unresolved until a person resolves it, as for quarantine.
ALTER TABLE ledger_compensations ADD COLUMN resolved_at TIMESTAMP WITH TIME ZONE;
ALTER TABLE ledger_compensations ADD COLUMN resolution VARCHAR;
