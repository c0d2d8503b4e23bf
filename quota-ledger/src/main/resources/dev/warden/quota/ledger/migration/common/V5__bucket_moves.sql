-- Warden ledger schema, version 5 (PostgreSQL and H2 alike): split (bucketed) accounts.
-- A split account's buckets live in several partitions; every change of a bucket is journaled on its own
-- partition's stream with the account id, including the moves between buckets: 'moveout' on the source's
-- stream and 'movein' on the target's, keyed '<kind>:<move id>'. Net zero for the account, they keep each
-- bucket's entries complete on its stream, so the account's balance here, summed from several streams in
-- any interleaving, is a sum of bucket balances each of which was non-negative: CHECK (balance >= 0) holds.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind
    CHECK (kind IN ('open', 'topup', 'refund', 'deduct', 'hold', 'capture', 'release', 'expire', 'post', 'moveout', 'movein'));
