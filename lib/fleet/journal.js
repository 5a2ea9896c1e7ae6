'use strict';
// A turn's journal in PostgreSQL: each operation call is a row, written as `started` before
// the handler runs and as `done` (with its answer) before the guest sees it, so a turn re-run
// by another worker after a crash answers completed calls from here and meets the one that was
// running as interrupted. Row -1 keeps the turn's clock, so the re-run sees the same `Date`.

/** The row that keeps the clock of a turn. */
const CLOCK_SEQ = -1;

/**
 * The durable journal of one session's turns in `schema`, for `attachJournal`.
 * @param {{ query(text: string, values?: unknown[]): Promise<{ rows: any[] }> }} db
 * @param {string} s the schema, quoted
 * @param {string} sessionId
 * @param {number} attempt the job attempt writing (kept with each row, for inspection)
 * @returns {import('../session/store-hooks.js').DurableJournal}
 */
function postgresJournal(db, s, sessionId, attempt) {
  return {
    async begin({ turnNumber, now }) {
      await db.query(
        `INSERT INTO ${s}.journal (session_id, turn_number, seq, operation, state, entry, attempt)
         VALUES ($1, $2, ${CLOCK_SEQ}, '#clock', 'done', $3, $4) ON CONFLICT DO NOTHING`,
        [sessionId, turnNumber, String(now), attempt],
      );
      const { rows } = await db.query(
        `SELECT seq, operation, args, state, entry FROM ${s}.journal
         WHERE session_id = $1 AND turn_number = $2 ORDER BY seq`,
        [sessionId, turnNumber],
      );
      let clock = now;
      /** @type {import('../session/store-hooks.js').JournalRecord[]} */
      const entries = [];
      /** @type {number[]} */
      const interrupted = [];
      for (const row of rows) {
        if (row.seq === CLOCK_SEQ) clock = Number(row.entry);
        else if (row.state === 'started') interrupted.push(row.seq);
        else if (row.seq === entries.length) {
          const ended = JSON.parse(row.entry);
          entries.push({ operation: row.operation, args: row.args, value: ended.value, error: ended.error });
        }
      }
      return { now: clock, entries, interrupted };
    },
    async started(call) {
      await db.query(
        `INSERT INTO ${s}.journal (session_id, turn_number, seq, operation, args, state, idempotency_key, attempt)
         VALUES ($1, $2, $3, $4, $5, 'started', $6, $7)
         ON CONFLICT (session_id, turn_number, seq) DO UPDATE
           SET state = 'started', attempt = EXCLUDED.attempt, updated_at = now()
           WHERE ${s}.journal.state <> 'done'`,
        [sessionId, call.turnNumber, call.seq, call.operation, call.args, call.idempotencyKey, attempt],
      );
    },
    async completed(call) {
      const entry = JSON.stringify({ value: call.value, error: call.error });
      await db.query(
        `INSERT INTO ${s}.journal (session_id, turn_number, seq, operation, args, state, entry, attempt)
         VALUES ($1, $2, $3, $4, $5, 'done', $6, $7)
         ON CONFLICT (session_id, turn_number, seq) DO UPDATE
           SET state = 'done', entry = EXCLUDED.entry, attempt = EXCLUDED.attempt, updated_at = now()`,
        [sessionId, call.turnNumber, call.seq, call.operation, call.args, entry, attempt],
      );
    },
  };
}

module.exports = { postgresJournal };
