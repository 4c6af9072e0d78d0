import { randomUUID } from 'node:crypto';
import type { SqlClient, SqlExecutor } from '../../storage/index.js';
import { conflict } from '../errors/service-error.js';
import { putBlob, readBlob, requireBlob, type BlobRef } from './blobs.js';
import { ensureParents, requireFree } from './namespace.js';
import { assetNotFound, FILE_COLUMNS, fileOf, FILES_WITH_BLOBS, INLINE_BYTES, orTaken, S, type AssetScope, type FileRecord } from './records.js';

/** Where a file's bytes come from: sent now, or a blob uploaded before. */
export type FileBytes = { bytes: Buffer } | { blob: string };

const SELECT_FILE = `SELECT ${FILE_COLUMNS}, ${INLINE_BYTES} FROM ${FILES_WITH_BLOBS}`;

async function stored(tx: SqlExecutor, projectId: string, src: FileBytes): Promise<BlobRef> {
  return 'bytes' in src ? putBlob(tx, projectId, src.bytes) : requireBlob(tx, projectId, src.blob);
}

async function readOne(db: SqlExecutor, s: AssetScope, where: string, value: string): Promise<FileRecord | null> {
  const r = await db.query(`${SELECT_FILE} WHERE f.project_id = $1 AND f.branch = $2 AND f.${where} = $3`, [s.projectId, s.branch, value]);
  return r.rows.length === 0 ? null : fileOf(r.rows[0]!);
}

export async function requireFile(db: SqlExecutor, s: AssetScope, id: string): Promise<FileRecord> {
  const f = await readOne(db, s, 'id', id);
  if (f === null) throw assetNotFound('file');
  return f;
}

export async function fileByPath(db: SqlExecutor, s: AssetScope, path: string): Promise<FileRecord> {
  const f = await readOne(db, s, 'path', path);
  if (f === null) throw assetNotFound('file');
  return f;
}

/** Files in path order; `prefix` keeps those whose path starts with it (a plain string prefix, `src/`). */
export async function listFiles(db: SqlExecutor, s: AssetScope, prefix: string | null): Promise<FileRecord[]> {
  const r = await db.query(
    `${SELECT_FILE} WHERE f.project_id = $1 AND f.branch = $2 AND ($3::text IS NULL OR left(f.path, length($3)) = $3) ORDER BY f.path`,
    [s.projectId, s.branch, prefix],
  );
  return r.rows.map(fileOf);
}

export async function createFile(db: SqlClient, s: AssetScope, path: string, src: FileBytes, contentType: string): Promise<FileRecord> {
  const id = randomUUID();
  await orTaken(path, s, () => db.transaction(async (tx) => {
    await requireFree(tx, s, path);
    await ensureParents(tx, s, path);
    const blob = await stored(tx, s.projectId, src);
    await tx.query(
      `INSERT INTO ${S}.source_asset_files (project_id, branch, id, path, sha256, size, content_type, version) VALUES ($1, $2, $3, $4, $5, $6, $7, 1)`,
      [s.projectId, s.branch, id, path, blob.sha256, blob.size, contentType],
    );
  }));
  return requireFile(db, s, id);
}

async function lockFile(tx: SqlExecutor, s: AssetScope, id: string): Promise<{ path: string; sha256: string }> {
  const r = await tx.query<{ path: string; sha256: string }>(
    `SELECT path, sha256 FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2 AND id = $3 FOR UPDATE`, [s.projectId, s.branch, id],
  );
  if (r.rows.length === 0) throw assetNotFound('file');
  return r.rows[0]!;
}

/** New bytes; with `ifMatch` only while the file's sha256 is still that one (else 409). Each write is a new version. */
export async function replaceContent(db: SqlClient, s: AssetScope, id: string, bytes: Buffer, ifMatch: string | null): Promise<FileRecord> {
  await db.transaction(async (tx) => {
    const cur = await lockFile(tx, s, id);
    if (ifMatch !== null && ifMatch.toLowerCase() !== cur.sha256) {
      throw conflict('SourceAsset.VersionMismatch', `the file's sha256 is ${cur.sha256}, not ${ifMatch}; read it again and retry`, 'ifMatch');
    }
    const blob = await putBlob(tx, s.projectId, bytes);
    await tx.query(
      `UPDATE ${S}.source_asset_files SET sha256 = $4, size = $5, version = version + 1, updated_at = now() WHERE project_id = $1 AND branch = $2 AND id = $3`,
      [s.projectId, s.branch, id, blob.sha256, blob.size],
    );
  });
  return requireFile(db, s, id);
}

/** A rename is a change of the record: version + 1, bytes and id kept. */
export async function renameFile(db: SqlClient, s: AssetScope, id: string, to: string): Promise<FileRecord> {
  await orTaken(to, s, () => db.transaction(async (tx) => {
    const cur = await lockFile(tx, s, id);
    if (cur.path === to) return;
    await requireFree(tx, s, to);
    await ensureParents(tx, s, to);
    await tx.query(
      `UPDATE ${S}.source_asset_files SET path = $4, version = version + 1, updated_at = now() WHERE project_id = $1 AND branch = $2 AND id = $3`,
      [s.projectId, s.branch, id, to],
    );
  }));
  return requireFile(db, s, id);
}

export async function deleteFile(db: SqlExecutor, s: AssetScope, id: string): Promise<void> {
  const r = await db.query(`DELETE FROM ${S}.source_asset_files WHERE project_id = $1 AND branch = $2 AND id = $3`, [s.projectId, s.branch, id]);
  if (r.rowCount === 0) throw assetNotFound('file');
}

/** The record without inline content, and the bytes. */
export async function fileBytes(db: SqlExecutor, s: AssetScope, id: string): Promise<{ file: FileRecord; bytes: Buffer }> {
  const file = await requireFile(db, s, id);
  delete file.content;
  return { file, bytes: await readBlob(db, s.projectId, file.sha256) };
}

