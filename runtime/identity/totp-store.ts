import type { SqlClient, SqlExecutor } from '../../storage/index.js';
import type { SecretStore } from '../secrets/index.js';
import { base32Decode, matchTotp } from './totp.js';

/**
 * A subject's TOTP factor (`identity_totp_factors`). The base32 secret is
 * sealed in the secret store (AES-256-GCM, as webhook signing secrets) and
 * never leaves it except into the enrolment answer; `last_used_step` makes a
 * code single-use: a step is accepted only above it, and raising it is a
 * compare-and-set, so two concurrent uses of one code cannot both pass.
 */
interface FactorRow { secret_id: string | null; pending_secret_id: string | null; last_used_step: string | number | null }

const stepOf = (v: string | number | null): number | null => (v === null ? null : Number(v));

async function readFactor(db: SqlExecutor, projectId: string, subjectId: string): Promise<FactorRow | undefined> {
  return (await db.query<FactorRow>(
    `SELECT secret_id::text AS secret_id, pending_secret_id::text AS pending_secret_id, last_used_step
       FROM plinth.identity_totp_factors WHERE subject_id = $1 AND project_id = $2`,
    [subjectId, projectId],
  )).rows[0];
}

/** Whether the subject has a confirmed TOTP factor. */
export async function hasConfirmedTotp(db: SqlExecutor, projectId: string, subjectId: string): Promise<boolean> {
  return (await readFactor(db, projectId, subjectId))?.secret_id != null;
}

/** Stores `secret` as the subject's pending (unconfirmed) TOTP secret, replacing an earlier pending one. */
export async function putPendingTotp(db: SqlClient, secrets: SecretStore, projectId: string, subjectId: string, secret: string): Promise<void> {
  await db.transaction(async (tx) => {
    const before = (await tx.query<{ pending_secret_id: string | null }>(
      'SELECT pending_secret_id::text AS pending_secret_id FROM plinth.identity_totp_factors WHERE subject_id = $1 AND project_id = $2 FOR UPDATE',
      [subjectId, projectId],
    )).rows[0];
    const secretId = await secrets.put(tx, projectId, secret);
    await tx.query(
      `INSERT INTO plinth.identity_totp_factors (subject_id, project_id, pending_secret_id) VALUES ($1, $2, $3)
       ON CONFLICT (subject_id) DO UPDATE SET pending_secret_id = EXCLUDED.pending_secret_id`,
      [subjectId, projectId, secretId],
    );
    if (before?.pending_secret_id != null) await tx.query('DELETE FROM plinth.secrets WHERE id = $1', [before.pending_secret_id]);
  });
}

export type ConfirmOutcome = 'confirmed' | 'no-pending' | 'wrong-code';

/** Confirms the pending secret with its first code: it becomes the factor (replacing an older one). */
export async function confirmPendingTotp(db: SqlClient, secrets: SecretStore, projectId: string, subjectId: string, code: string, nowMs = Date.now()): Promise<ConfirmOutcome> {
  const row = await readFactor(db, projectId, subjectId);
  if (row === undefined || row.pending_secret_id === null) return 'no-pending';
  const key = await keyOf(db, secrets, row.pending_secret_id);
  if (key === null) return 'no-pending';
  // A new secret has spent no step yet (the old factor's last step says nothing about its codes).
  const step = matchTotp(key, code, nowMs, null);
  if (step === null) return 'wrong-code';
  return db.transaction(async (tx) => {
    const done = await tx.query(
      `UPDATE plinth.identity_totp_factors
          SET secret_id = pending_secret_id, pending_secret_id = NULL, confirmed_at = now(), last_used_step = $4
        WHERE subject_id = $1 AND project_id = $2 AND pending_secret_id = $3
        RETURNING subject_id`,
      [subjectId, projectId, row.pending_secret_id, step],
    );
    if (done.rows.length === 0) return 'wrong-code';
    // The factor it replaces is gone for good.
    if (row.secret_id !== null) await tx.query('DELETE FROM plinth.secrets WHERE id = $1', [row.secret_id]);
    return 'confirmed';
  });
}

/** Checks a code against the confirmed factor and spends its step; false for a wrong, replayed or older code (or no factor). */
export async function useTotpCode(db: SqlExecutor, secrets: SecretStore, projectId: string, subjectId: string, code: string, nowMs = Date.now()): Promise<boolean> {
  const row = await readFactor(db, projectId, subjectId);
  if (row === undefined || row.secret_id === null) return false;
  const key = await keyOf(db, secrets, row.secret_id);
  if (key === null) return false;
  const step = matchTotp(key, code, nowMs, stepOf(row.last_used_step));
  if (step === null) return false;
  const spent = await db.query(
    `UPDATE plinth.identity_totp_factors SET last_used_step = $3
      WHERE subject_id = $1 AND project_id = $2 AND (last_used_step IS NULL OR last_used_step < $3) RETURNING subject_id`,
    [subjectId, projectId, step],
  );
  return spent.rows.length === 1;
}

async function keyOf(db: SqlExecutor, secrets: SecretStore, secretId: string): Promise<Buffer | null> {
  const secret = await secrets.get(db, secretId);
  return secret === null ? null : base32Decode(secret);
}
