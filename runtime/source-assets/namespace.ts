import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../storage/index.js';
import { ancestorsOf } from './paths.js';
import { pathTaken, S, type AssetScope } from './records.js';

/** Folders and files share one namespace per branch: a path is one or the other, never both. */
export async function requireFree(tx: SqlExecutor, s: AssetScope, path: string): Promise<void> {
  const r = await tx.query(
    `SELECT 1 FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2 AND path = $3
     UNION ALL SELECT 1 FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2 AND path = $3`,
    [s.projectId, s.branch, path],
  );
  if (r.rows.length > 0) throw pathTaken(path);
}

/** Creates the missing folders above `path` (CONTRACT: "missing parent folders are created"); a file in the way is a 409. */
export async function ensureParents(tx: SqlExecutor, s: AssetScope, path: string): Promise<void> {
  const parents = ancestorsOf(path);
  if (parents.length === 0) return;
  const files = await tx.query<{ path: string }>(
    `SELECT path FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2 AND path = ANY($3::text[])`, [s.projectId, s.branch, parents],
  );
  if (files.rows.length > 0) throw pathTaken(files.rows[0]!.path);
  for (const p of parents) {
    await tx.query(
      `INSERT INTO ${S}.source_asset_folders (project_id, branch, id, path) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, branch, path) DO NOTHING`,
      [s.projectId, s.branch, randomUUID(), p],
    );
  }
}
