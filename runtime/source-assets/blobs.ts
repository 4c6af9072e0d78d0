import { createHash } from 'node:crypto';
import type { SqlExecutor } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';
import { bytesOf, S } from './records.js';

export interface BlobRef {
  sha256: string;
  size: number;
}

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Stores the bytes once per project (keyed by their sha256): the same bytes stored again write nothing. */
export async function putBlob(tx: SqlExecutor, projectId: string, bytes: Buffer): Promise<BlobRef> {
  const sha256 = sha256Of(bytes);
  await tx.query(
    `INSERT INTO ${S}.source_asset_blobs (project_id, sha256, size, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, sha256) DO NOTHING`,
    [projectId, sha256, bytes.length, bytes],
  );
  return { sha256, size: bytes.length };
}

/** A blob named in a file body (`blob`) must have been uploaded to this project: else 422 naming `blob`. */
export async function requireBlob(tx: SqlExecutor, projectId: string, sha256: string): Promise<BlobRef> {
  const r = await tx.query<{ size: string }>(`SELECT size FROM ${S}.source_asset_blobs WHERE project_id = $1 AND sha256 = $2`, [projectId, sha256.toLowerCase()]);
  if (r.rows.length === 0) throw validationFailed('SourceAsset.UnknownBlob', `no blob ${sha256} was uploaded to this project (POST /api/SourceAsset/blob)`, 'blob');
  return { sha256: sha256.toLowerCase(), size: Number(r.rows[0]!.size) };
}

export async function readBlob(tx: SqlExecutor, projectId: string, sha256: string): Promise<Buffer> {
  const r = await tx.query<{ bytes: unknown }>(`SELECT bytes FROM ${S}.source_asset_blobs WHERE project_id = $1 AND sha256 = $2`, [projectId, sha256]);
  return bytesOf(r.rows[0]?.bytes ?? Buffer.alloc(0));
}
