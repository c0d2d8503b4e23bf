/**
 * The journal's vocabulary: {@link dev.warden.quota.ledger.journal.JournalEntry} decodes every kind of
 * entry the quota scripts append and is the one place that says what each kind does to a balance; a
 * {@link dev.warden.quota.ledger.journal.QuarantinedEntry} is one the database refused, a
 * {@link dev.warden.quota.ledger.journal.Compensation} a replay the consumer undid, a
 * {@link dev.warden.quota.ledger.journal.RefusedCompensation} one Redis would not undo.
 */
package dev.warden.quota.ledger.journal;
