import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { Envelope } from './envelope.js';
import type { ChainLink } from './merge.js';

const S = PLATFORM_SCHEMA;

const json = (v: unknown): Envelope => (typeof v === 'string' ? JSON.parse(v) : v) as Envelope;

/**
 * The project and its ancestors that have an envelope, the project first and
 * then nearest ancestor first (one recursive query; the hierarchy is at most
 * 64 deep, as in project-store.ts).
 */
export async function readChain(db: SqlExecutor, projectId: string): Promise<ChainLink[]> {
  const res = await db.query<{ project_id: string; envelope: unknown }>(
    `WITH RECURSIVE r AS (
        SELECT id, parent_project_id, 0 AS depth FROM ${S}.projects WHERE id = $1
        UNION ALL
        SELECT p.id, p.parent_project_id, r.depth + 1 FROM ${S}.projects p JOIN r ON p.id = r.parent_project_id WHERE r.depth < 64)
      SELECT e.project_id::text AS project_id, e.envelope FROM r JOIN ${S}.governance_envelopes e ON e.project_id = r.id ORDER BY r.depth`,
    [projectId],
  );
  return res.rows.map((r) => ({ projectId: r.project_id, envelope: json(r.envelope) }));
}

/**
 * Stores a project's own envelope, replacing the one it had; `{}` removes it
 * (the project then drops out of its descendants' chains). Called by the
 * project actor only (single writer).
 */
export async function writeEnvelope(db: SqlExecutor, projectId: string, envelope: Envelope): Promise<void> {
  if (Object.keys(envelope).length === 0) {
    await db.query(`DELETE FROM ${S}.governance_envelopes WHERE project_id = $1`, [projectId]);
    return;
  }
  await db.query(
    `INSERT INTO ${S}.governance_envelopes (project_id, envelope, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (project_id) DO UPDATE SET envelope = EXCLUDED.envelope, updated_at = now()`,
    [projectId, JSON.stringify(envelope)],
  );
}
