-- Warden ledger schema, version 3 (PostgreSQL and H2 alike): authorisation holds.

-- What an account has on hold: moved out of balance (available) by a hold, back by a release or an
-- expiry, out of the account by a capture. Redis keeps the same two figures, so reconciliation
-- compares balance + held on both sides.
ALTER TABLE ledger_accounts ADD COLUMN held BIGINT DEFAULT 0 NOT NULL;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_held_non_negative CHECK (held >= 0);

-- The hold's entries: hold, capture, release (a void, or a capture's unused rest), expire. Their
-- request_id is '<kind>:<hold id>' (':' never appears in an id), so they never meet a deduction's key
-- and each hold has at most one entry of each kind.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind
    CHECK (kind IN ('open', 'topup', 'refund', 'deduct', 'hold', 'capture', 'release', 'expire'));
