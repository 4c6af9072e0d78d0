/**
 * TEST-ONLY crash hook for the schema-journal recovery tests (docs/schema-journal.md).
 * Inert unless PLINTH_TEST_SCHEMA_CRASH names a point: then the node kills itself
 * with SIGKILL when a schema change reaches it, as a machine dying there would.
 * Point `after-pending`: the journal entry is written `pending`, its DDL transaction
 * has not started.
 */
export function schemaCrashPoint(point: 'after-pending'): void {
  if (process.env.PLINTH_TEST_SCHEMA_CRASH !== point) return;
  process.kill(process.pid, 'SIGKILL');
}

/**
 * TEST-ONLY: PLINTH_TEST_SKIP_SCHEMA_RECOVERY=1 keeps the recoverer from running at
 * start, so a test can watch an interrupted entry stay `pending` and finish it
 * through `POST /api/Schema/journal/{id}/recover`. Inert unless set.
 */
export const schemaRecoveryAtStartSkipped = (): boolean => process.env.PLINTH_TEST_SKIP_SCHEMA_RECOVERY === '1';
