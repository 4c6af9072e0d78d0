import { PLATFORM_SCHEMA, type SqlClient } from '../../storage/index.js';
import type { Logger } from '../log.js';
import { readHead } from './schema-change.js';
import { readTransition } from './schema-transitions.js';
import { backfillBatchSql } from './transition-plan.js';

const S = PLATFORM_SCHEMA;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * The backfill phase: walks the entity's rows by id in bounded batches with a
 * pause between them, touching each so the transition's trigger fills the new
 * column(s). Rows written meanwhile go through the trigger anyway. Runs outside
 * the Project actor (it writes rows, not schema); it stops when the transition
 * leaves running/backfill (a rollback) and calls `done` once every row is
 * through, so the Project actor contracts.
 */
export async function runBackfill(db: SqlClient, projectId: string, branch: string, id: string, log: Logger, done: () => void): Promise<void> {
  let cursor = FIRST_ID;
  try {
    for (;;) {
      const t = await readTransition(db, projectId, branch, id);
      if (t.state !== 'running' || t.phase !== 'backfill') return;
      const head = await readHead(db, projectId, branch, false);
      const res = await db.query<{ id: string }>(backfillBatchSql(head.schema, { entityName: t.entity_name }, t.spec.spec), [cursor, t.spec.pace.batchRows]);
      for (const r of res.rows) if (r.id > cursor) cursor = r.id;
      if (res.rows.length > 0) await db.query(`UPDATE ${S}.schema_transitions SET backfilled = backfilled + $2, updated_at = now() WHERE id = $1`, [id, res.rows.length]);
      if (res.rows.length < t.spec.pace.batchRows) {
        done();
        return;
      }
      await new Promise((r) => setTimeout(r, t.spec.pace.pauseMs));
    }
  } catch (err) {
    // A rollback dropping the columns mid-batch ends up here; the next start resumes a transition still running.
    log.warn('schema transition backfill stopped', { projectId, transitionId: id, error: err instanceof Error ? err.message : String(err) });
  }
}
