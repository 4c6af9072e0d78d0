import { randomUUID } from 'node:crypto';
import type { SqlClient, SqlExecutor } from '../../storage/index.js';
import { conflict, validationFailed } from '../errors/service-error.js';
import { ensureParents, requireFree } from './namespace.js';
import { assetNotFound, folderOf, FOLDER_COLUMNS, orTaken, S, type AssetScope, type FolderRecord } from './records.js';

/** Rows under a folder: its own path and everything below it (`a` holds `a/x`, not `ab`). */
const UNDER = (col: string, n: number): string => `(${col} = $${n} OR left(${col}, length($${n}) + 1) = $${n} || '/')`;

export async function createFolder(db: SqlClient, s: AssetScope, path: string): Promise<FolderRecord> {
  return orTaken(path, s, () => db.transaction(async (tx) => {
    await requireFree(tx, s, path);
    await ensureParents(tx, s, path);
    const r = await tx.query(
      `INSERT INTO ${S}.source_asset_folders (project_id, branch, id, path) VALUES ($1, $2, $3, $4) RETURNING ${FOLDER_COLUMNS}`,
      [s.projectId, s.branch, randomUUID(), path],
    );
    return folderOf(r.rows[0]!);
  }));
}

export async function listFolders(db: SqlExecutor, s: AssetScope): Promise<FolderRecord[]> {
  const r = await db.query(`SELECT ${FOLDER_COLUMNS} FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2 ORDER BY path`, [s.projectId, s.branch]);
  return r.rows.map(folderOf);
}

async function lockFolder(tx: SqlExecutor, s: AssetScope, id: string): Promise<FolderRecord> {
  const r = await tx.query(`SELECT ${FOLDER_COLUMNS} FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2 AND id = $3 FOR UPDATE`, [s.projectId, s.branch, id]);
  if (r.rows.length === 0) throw assetNotFound('folder');
  return folderOf(r.rows[0]!);
}

/** Moves the folder and everything under it; the files keep their ids and versions (a move is not a content change). */
export async function renameFolder(db: SqlClient, s: AssetScope, id: string, to: string): Promise<FolderRecord> {
  return orTaken(to, s, () => db.transaction(async (tx) => {
    const f = await lockFolder(tx, s, id);
    if (to === f.path) return f;
    if (to.startsWith(`${f.path}/`)) throw validationFailed('SourceAsset.InvalidPath', `a folder cannot move into itself ('${f.path}' → '${to}')`, 'path');
    await requireFree(tx, s, to);
    await ensureParents(tx, s, to);
    for (const table of ['source_asset_folders', 'source_asset_files']) {
      await tx.query(
        `UPDATE ${S}.${table} SET path = $4 || substr(path, length($3) + 1) WHERE project_id = $1 AND branch = $2 AND ${UNDER('path', 3)}`,
        [s.projectId, s.branch, f.path, to],
      );
    }
    return { ...f, path: to };
  }));
}

/** 204, or 409 `SourceAsset.FolderNotEmpty` when it holds anything and `recursive` is not set. */
export async function deleteFolder(db: SqlClient, s: AssetScope, id: string, recursive: boolean): Promise<void> {
  await db.transaction(async (tx) => {
    const f = await lockFolder(tx, s, id);
    if (!recursive) {
      const inside = await tx.query(
        `SELECT 1 FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2 AND left(path, length($3) + 1) = $3 || '/'
         UNION ALL SELECT 1 FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2 AND left(path, length($3) + 1) = $3 || '/' LIMIT 1`,
        [s.projectId, s.branch, f.path],
      );
      if (inside.rows.length > 0) throw conflict('SourceAsset.FolderNotEmpty', `folder '${f.path}' is not empty; delete with ?recursive=true to remove what it holds`);
    }
    for (const table of ['source_asset_files', 'source_asset_folders']) {
      await tx.query(`DELETE FROM ${S}.${table} WHERE project_id = $1 AND branch = $2 AND ${UNDER('path', 3)}`, [s.projectId, s.branch, f.path]);
    }
  });
}
