import { PLATFORM_SCHEMA, SQLSTATE, sqlstateOf } from '../../storage/index.js';
import { conflict, notFound } from '../errors/service-error.js';
import { UUID_TEXT } from '../control/rows.js';
import { isTextType, MAX_INLINE_BYTES } from './content-types.js';

export const S = PLATFORM_SCHEMA;

/** Every query of the family is filtered by both: a project's branch is the unit of isolation. */
export interface AssetScope {
  projectId: string;
  branch: string;
}

export interface FolderRecord {
  id: string;
  path: string;
  createdAt: string;
}

/** CONTRACT "Source assets": the file record; `content` only for text of at most 1 MiB. */
export interface FileRecord {
  id: string;
  path: string;
  size: number;
  sha256: string;
  contentType: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  content?: string;
}

export const FOLDER_COLUMNS = 'id, path, created_at';
export const FILE_COLUMNS = 'f.id, f.path, f.size, f.sha256, f.content_type, f.version, f.created_at, f.updated_at';
/** The bytes of what may be shown inline, joined from the blob (nothing larger is read). */
export const INLINE_BYTES = `CASE WHEN f.size <= ${MAX_INLINE_BYTES} THEN b.bytes END AS inline`;
export const FILES_WITH_BLOBS = `${S}.source_asset_files f JOIN ${S}.source_asset_blobs b ON b.project_id = f.project_id AND b.sha256 = f.sha256`;

export type Row = Record<string, unknown>;

export const folderOf = (r: Row): FolderRecord => ({ id: String(r.id), path: String(r.path), createdAt: String(r.created_at) });

/** bytea answers a Buffer on PostgreSQL and a Uint8Array on PGlite. */
export const bytesOf = (v: unknown): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength));

export function fileOf(r: Row): FileRecord {
  const rec: FileRecord = {
    id: String(r.id), path: String(r.path), size: Number(r.size), sha256: String(r.sha256), contentType: String(r.content_type),
    version: Number(r.version), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
  if (r.inline !== undefined && r.inline !== null && isTextType(rec.contentType)) rec.content = bytesOf(r.inline).toString('utf8');
  return rec;
}

export const assetNotFound = (what: 'folder' | 'file'): Error => notFound('SourceAsset.NotFound', `${what} not found on this branch`);

/** A path id that is not a UUID names nothing (and must not reach a uuid column as a 500). */
export function idOf(raw: string | undefined, what: 'folder' | 'file'): string {
  if (raw === undefined || !UUID_TEXT.test(raw)) throw assetNotFound(what);
  return raw.toLowerCase();
}

export const pathTaken = (path: string): Error => conflict('SourceAsset.PathTaken', `'${path}' is already a folder or a file on this branch`, 'path');

/**
 * A concurrent writer took the path between our check and our insert: the unique index
 * answers, as a 409. The branch deleted meanwhile: its foreign key answers, as the 404 an
 * unknown branch gets.
 */
export async function orTaken<T>(path: string, s: AssetScope, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const state = sqlstateOf(err);
    if (state === SQLSTATE.UNIQUE_VIOLATION) throw pathTaken(path);
    if (state === SQLSTATE.FOREIGN_KEY_VIOLATION) throw notFound('Branch.NotFound', `branch '${s.branch}' not found`);
    throw err;
  }
}
