import type { SqlExecutor } from '../../storage/index.js';
import { listFolders } from './folders.js';
import { FILE_COLUMNS, fileOf, S, type AssetScope, type FileRecord } from './records.js';

export interface FolderNode {
  path: string;
  folders: FolderNode[];
  files: FileRecord[];
}

/** CONTRACT `GET tree`: `{ folders, files }` from the root, each folder with what it holds, in path order. */
export async function treeOf(db: SqlExecutor, s: AssetScope): Promise<{ folders: FolderNode[]; files: FileRecord[] }> {
  const folders = await listFolders(db, s);
  const files = (await db.query(`SELECT ${FILE_COLUMNS} FROM ${S}.source_asset_files f WHERE f.project_id = $1 AND f.branch = $2 ORDER BY f.path`, [s.projectId, s.branch])).rows.map(fileOf);
  const root: FolderNode = { path: '', folders: [], files: [] };
  const nodes = new Map<string, FolderNode>([['', root]]);
  const parentOf = (p: string): FolderNode => nodes.get(p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '') ?? root;
  // Path order puts a folder before anything under it, so its node exists when its children arrive.
  for (const f of folders) {
    const node: FolderNode = { path: f.path, folders: [], files: [] };
    nodes.set(f.path, node);
    parentOf(f.path).folders.push(node);
  }
  for (const f of files) parentOf(f.path).files.push(f);
  return { folders: root.folders, files: root.files };
}

/** CONTRACT `GET scope/shape`: counts and the bytes the branch's files hold (a blob shared by two files counts twice). */
export async function shapeOf(db: SqlExecutor, s: AssetScope): Promise<{ branch: string; folders: number; files: number; bytes: number }> {
  const r = await db.query<{ folders: string; files: string; bytes: string }>(
    `SELECT (SELECT count(*) FROM ${S}.source_asset_folders WHERE project_id = $1 AND branch = $2) AS folders,
            (SELECT count(*) FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2) AS files,
            (SELECT coalesce(sum(size), 0) FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2) AS bytes`,
    [s.projectId, s.branch],
  );
  const row = r.rows[0]!;
  return { branch: s.branch, folders: Number(row.folders), files: Number(row.files), bytes: Number(row.bytes) };
}
