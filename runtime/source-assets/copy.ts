import type { SqlExecutor } from '../../storage/index.js';
import { S } from './records.js';

/**
 * Copy-on-create (CONTRACT "Source assets"): the new branch gets `from`'s folders and files
 * with the same ids, in the branch creation's transaction. Only records are copied: the
 * bytes are per project (source_asset_blobs), so the copy's cost is linear in the records.
 */
export async function copySourceAssets(tx: SqlExecutor, projectId: string, from: string, to: string): Promise<void> {
  await tx.query(
    `INSERT INTO ${S}.source_asset_folders (project_id, branch, id, path, created_at)
     SELECT project_id, $3, id, path, created_at FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2`,
    [projectId, from, to],
  );
  await tx.query(
    `INSERT INTO ${S}.source_asset_files (project_id, branch, id, path, sha256, size, content_type, version, created_at, updated_at)
     SELECT project_id, $3, id, path, sha256, size, content_type, version, created_at, updated_at FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2`,
    [projectId, from, to],
  );
}
