-- Warden ledger schema, version 7 (PostgreSQL and H2 alike): the entries' position index leads with the time.

-- The same constraint (a stream entry is held once), over the same columns in another order. Led by the stream
-- key, every insert compared a long text first and went to one of as many places in the index as there are
-- partitions; led by the entry's milliseconds, the comparisons are of numbers and the inserts go to the few
-- pages at the index's right edge. That was a large share of the cost of each entry the consumer writes.
-- Reconciliation's reads of a stream from a time on scan the same index by time. Rebuilding the index holds
-- the table for as long as that takes: on a large ledger, migrate in a quiet hour.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_position;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_position UNIQUE (entry_ms, entry_seq, stream);
