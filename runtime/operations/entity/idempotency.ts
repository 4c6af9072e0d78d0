import { createHash } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlClient, type SqlExecutor } from '../../../storage/index.js';
import { ServiceError, validationFailed } from '../../errors/service-error.js';
import { canonicalJson } from '../../publication/hash.js';
import type { OperationContext, Result } from '../types.js';

const KEY = /^[\x21-\x7e]{1,255}$/;
const T = `${PLATFORM_SCHEMA}.idempotency_keys`;

export function checkIdempotencyKey(key: string): string {
  if (!KEY.test(key)) throw validationFailed('Idempotency.InvalidKey', 'Idempotency-Key must be 1-255 visible ASCII characters', 'Idempotency-Key');
  return key;
}

/**
 * Runs `create` at most once per (project, branch, operation, caller, key)
 * within the retention window. The caller is part of the scope because the
 * stored answer is the one its row policy and field masks produced: replayed
 * to another caller it would hand over a row outside that caller's row
 * filter or fields masked from it. The caller's label (`user:<id>`,
 * `apikey:<id>`, `platform-admin`, `anonymous`) prefixes the stored key;
 * keys are visible ASCII without spaces, so the space keeps them apart. Same key and same body → the prior result; same key and
 * another body → 409. The claim row and the write share one transaction, so a
 * failed create leaves no claim and a concurrent duplicate waits on the claim.
 * `db`: where that transaction runs (an authored operation's own invocation
 * transaction, runtime/authored/invocation-tx.ts, so its writes share it).
 */
export async function runIdempotent(ctx: OperationContext, key: string, create: (tx: SqlExecutor) => Promise<Result>, db: SqlClient = ctx.services.db): Promise<Result> {
  const c = claimOf(ctx, key);
  return db.transaction(async (tx) => {
    const prior = await takeClaim(tx, ctx, c);
    if (prior !== null) return replay(prior, c);
    const result = await create(tx);
    await storeAnswer(tx, c, result);
    return result;
  });
}

/**
 * runIdempotent for work that cannot run inside the claim's transaction (an
 * authored ManagementHandler: the platform operations it calls keep their own
 * transactions). The claim commits first (status 0, "in progress"); the answer
 * is stored when the work succeeds, and the claim deleted when it fails, so a
 * retry runs it again. Same key and body → the stored answer; another body →
 * 409 `Idempotency.KeyReused`; a duplicate while the first still runs → 409
 * `Idempotency.InProgress` (retryable) instead of waiting on the claim.
 */
export async function runClaimedIdempotent(ctx: OperationContext, key: string, work: () => Promise<Result>): Promise<Result> {
  const c = claimOf(ctx, key);
  const db = ctx.services.db;
  const prior = await db.transaction((tx) => takeClaim(tx, ctx, c));
  if (prior !== null) {
    if (prior.request_hash === c.requestHash && prior.status === 0) {
      throw new ServiceError('CONFLICT', 'Idempotency.InProgress', 'a request with this Idempotency-Key is still running', { field: 'Idempotency-Key', retryable: true });
    }
    return replay(prior, c);
  }
  let result: Result;
  try {
    result = await work();
  } catch (err) {
    await db.query(`DELETE FROM ${T} WHERE project_id = $1 AND branch = $2 AND operation_id = $3 AND key = $4`, c.id);
    throw err;
  }
  await storeAnswer(db, c, result);
  return result;
}

/** A claim's row key (project, branch, operation, caller and key) and the hash of the body it was made with. */
interface Claim { id: string[]; requestHash: string }
interface ClaimRow { request_hash: string; status: number; body: unknown }

function claimOf(ctx: OperationContext, key: string): Claim {
  const scope = ctx.scope!;
  return {
    id: [scope.project.id, scope.branch, ctx.operationId, `${ctx.actor.label} ${key}`],
    requestHash: createHash('sha256').update(canonicalJson(ctx.inv.body)).digest('hex'),
  };
}

/** Drops an expired claim, then claims the key: null when this request now holds it, else the row that already does. */
async function takeClaim(tx: SqlExecutor, ctx: OperationContext, c: Claim): Promise<ClaimRow | null> {
  await tx.query(
    `DELETE FROM ${T} WHERE project_id = $1 AND branch = $2 AND operation_id = $3 AND key = $4 AND created_at < now() - ($5::bigint * interval '1 millisecond')`,
    [...c.id, ctx.services.limits.idempotencyRetentionMs],
  );
  const claimed = await tx.query(
    `INSERT INTO ${T} (project_id, branch, operation_id, key, request_hash, status, body) VALUES ($1, $2, $3, $4, $5, 0, 'null'::jsonb) ON CONFLICT DO NOTHING RETURNING key`,
    [...c.id, c.requestHash],
  );
  if (claimed.rows.length > 0) return null;
  const prior = await tx.query<ClaimRow>(`SELECT request_hash, status, body FROM ${T} WHERE project_id = $1 AND branch = $2 AND operation_id = $3 AND key = $4`, c.id);
  return prior.rows[0] ?? { request_hash: '', status: 0, body: null };
}

/** The stored answer of a key used before with the same body; another body → 409 `Idempotency.KeyReused`. */
function replay(prior: ClaimRow, c: Claim): Result {
  if (prior.request_hash !== c.requestHash) {
    throw new ServiceError('CONFLICT', 'Idempotency.KeyReused', 'this Idempotency-Key was used with a different request body', { field: 'Idempotency-Key' });
  }
  return { status: prior.status, body: prior.body, headers: { 'Idempotent-Replayed': 'true' } };
}

async function storeAnswer(db: SqlExecutor, c: Claim, result: Result): Promise<void> {
  await db.query(`UPDATE ${T} SET status = $5, body = $6::jsonb WHERE project_id = $1 AND branch = $2 AND operation_id = $3 AND key = $4`, [
    ...c.id, result.status, JSON.stringify(result.body),
  ]);
}
