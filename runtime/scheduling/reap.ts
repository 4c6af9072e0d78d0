import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import { closeAttempt, settleRun, type RunError } from './finish.js';

const S = PLATFORM_SCHEMA;
const BATCH = 100;
const LOST: RunError = { code: 'UNAVAILABLE', reasonCode: 'TaskAttempt.Lost', message: 'the attempt\'s node stopped renewing its lease' };

/**
 * Marks attempts whose lease ran out `lost` (their node died or froze) and
 * settles their runs: queued again, due now, while attempts remain, else
 * `failed` (or `cancelled` when a cancel was asked for). Each step is
 * conditioned on state (finish.ts), so a late finisher and this cannot both
 * win. Answers how many attempts it marked and whether a run ended (its event
 * is in the outbox).
 */
export async function reapLostAttempts(db: SqlClient): Promise<{ lost: number; ended: boolean }> {
  let lost = 0;
  let ended = false;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const due = await tx.query<{ id: string; run_id: string }>(
        `SELECT id, run_id FROM ${S}.task_attempts WHERE state = 'running' AND lease_until < now() ORDER BY lease_until LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      );
      for (const a of due.rows) {
        if (!(await closeAttempt(tx, a.id, 'lost', LOST))) continue;
        lost++;
        const state = await settleRun(tx, a.run_id, LOST, { correlationId: randomUUID(), publicationVersion: null }, true);
        if (state === 'failed' || state === 'cancelled') ended = true;
      }
      return due.rows.length;
    });
    if (batch < BATCH) return { lost, ended };
  }
}
