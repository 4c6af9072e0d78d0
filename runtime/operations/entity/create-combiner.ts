import { isConnectionError, sqlstateOf, type SqlClient } from '../../../storage/index.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import type { RowValues } from '../../entities/input.js';
import { mapEntitySqlError } from '../../entities/sql-error-map.js';
import type { OperationContext } from '../types.js';
import { insertCombined, insertRows } from './insert.js';

/** Rows one combined INSERT carries at most (each row count is its own prepared text). */
const MAX_ROWS = 16;

interface Waiter {
  ctx: OperationContext;
  input: RowValues;
  resolve(row: Record<string, unknown>): void;
  reject(err: unknown): void;
}

/** The creates of one entity, scope and field set: statements in flight, and the creates waiting for one. */
interface Lane {
  inFlight: number;
  readonly waiting: Waiter[];
  /** Where the lane is kept, and under which key: an idle lane is dropped (a client sending every field subset leaves nothing behind). */
  readonly home: Map<string, Lane>;
  readonly key: string;
}

const lanes = new WeakMap<CompiledEntity, Map<string, Lane>>();

/** Process-wide counts, for diagnostics and tests. */
export const combinedCreates = {
  /** Multi-row statements sent, and the creates they carried. */
  statements: 0,
  rows: 0,
  /** Multi-row statements refused as a whole, whose creates then ran alone. */
  refused: 0,
};

/**
 * Creates one row, combining it with concurrent creates of the same kind.
 *
 * Under a burst of creates the pool's connections are all busy and requests
 * queue for one anyway; each then pays its own round trip, statement and
 * commit (a WAL flush). Here a lane (entity, scope, fields set) runs at most
 * half the pool's statements at once; creates arriving while they are all busy
 * wait, and the next free slot takes every waiting create, up to MAX_ROWS, as
 * one multi-row INSERT with an outbox row per row, committed together. A create
 * that finds a free slot goes at once, alone, as before: nothing ever waits
 * for a batch to fill, so an idle server answers exactly as fast.
 *
 * Each request still gets its own row, events, audit row and usage. If the
 * combined statement is refused (a unique or foreign-key violation of one row),
 * nothing of it was written and each create runs again alone, so it answers
 * its own error and the others succeed. A failure without an SQLSTATE (the
 * connection dropped: the commit may or may not have happened) is not retried.
 *
 * Only plain creates combine: no row policy (its check is per caller), no
 * idempotency key (its own transaction), the same publication.
 */
export function createRow(db: SqlClient, ctx: OperationContext, entity: CompiledEntity, input: RowValues): Promise<Record<string, unknown>> {
  if (ctx.rowPolicy !== null) return insertOne(db, ctx, entity, input);
  const lane = laneOf(db, ctx, entity, input);
  if (lane.inFlight < Math.max(1, db.connections >> 1)) {
    lane.inFlight++;
    return insertOne(db, ctx, entity, input).finally(() => next(db, entity, lane));
  }
  return new Promise((resolve, reject) => lane.waiting.push({ ctx, input, resolve, reject }));
}

/**
 * A number per SQL client: a lane combines only creates bound for one client. An
 * authored handler's creates go through its invocation's transaction
 * (runtime/authored/invocation-tx.ts): combined with other requests' they would
 * commit with the wrong transaction.
 */
const clientIds = new WeakMap<SqlClient, number>();
let nextClientId = 0;
const clientIdOf = (db: SqlClient): number => {
  let id = clientIds.get(db);
  if (id === undefined) clientIds.set(db, (id = ++nextClientId));
  return id;
};

function laneOf(db: SqlClient, ctx: OperationContext, entity: CompiledEntity, input: RowValues): Lane {
  const scope = ctx.scope!;
  let byKey = lanes.get(entity);
  if (byKey === undefined) lanes.set(entity, (byKey = new Map()));
  // The entity is per publication; the scope's fields are what the outbox row carries.
  const key = `${clientIdOf(db)}|${scope.project.id}|${scope.branch}|${scope.publication.version}|${input.fields.map((f) => f.name).join(',')}`;
  let lane = byKey.get(key);
  if (lane === undefined) byKey.set(key, (lane = { inFlight: 0, waiting: [], home: byKey, key }));
  return lane;
}

/** A slot freed: the waiting creates go as one statement, else the slot is released. */
function next(db: SqlClient, entity: CompiledEntity, lane: Lane): void {
  const batch = lane.waiting.splice(0, MAX_ROWS);
  if (batch.length === 0) {
    if (--lane.inFlight === 0) lane.home.delete(lane.key);
    return;
  }
  void runBatch(db, entity, batch).finally(() => next(db, entity, lane));
}

async function runBatch(db: SqlClient, entity: CompiledEntity, batch: Waiter[]): Promise<void> {
  if (batch.length === 1) {
    const w = batch[0]!;
    await insertOne(db, w.ctx, entity, w.input).then(w.resolve, w.reject);
    return;
  }
  combinedCreates.statements++;
  combinedCreates.rows += batch.length;
  try {
    const rows = await insertCombined(db, batch[0]!.ctx, entity, batch.map((w) => w.input), batch.map((w) => w.ctx.inv.correlationId));
    batch.forEach((w, i) => w.resolve(rows[i]!));
  } catch (err) {
    if (sqlstateOf(err) === undefined || isConnectionError(err)) {
      // The same answer a lone create gets for this failure (503 for a lost connection).
      const answer = mapEntitySqlError(entity, err, 'write');
      for (const w of batch) w.reject(answer);
      return;
    }
    // Refused as a whole: each create alone answers its own outcome.
    combinedCreates.refused++;
    await Promise.all(batch.map((w) => insertOne(db, w.ctx, entity, w.input).then(w.resolve, w.reject)));
  }
}

const insertOne = async (db: SqlClient, ctx: OperationContext, entity: CompiledEntity, input: RowValues): Promise<Record<string, unknown>> =>
  (await insertRows(db, ctx, entity, [input]))[0]!;
