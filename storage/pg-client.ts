import pg from 'pg';
import type { QueryResult, SqlClient, SqlExecutor } from './sql-client.js';
import { ARRAY_ELEMENT_OID, TEXT_PARSERS } from './type-parsers.js';
import { retrySerializable } from './retry.js';
import { cancelRunningStatement } from './pg-cancel.js';
import { isConnectionError, sqlstateOf } from './sql-errors.js';

/** Tries of a transaction whose connection died before COMMIT (then the server rolled it back). */
const LOST_CONNECTION_ATTEMPTS = 3;

export interface PgClientOptions {
  connectionString: string;
  /** Pool size; one node wants a few connections per core. */
  max: number;
  /** Sessions with `synchronous_commit = off` (see relaxedDurability). */
  asyncCommit?: boolean;
}

/** Connections of the relaxed-durability client: it carries background batches, not requests. */
const RELAXED_POOL_SIZE = 2;

/** pg's text[] (OID 1009) parser: nested arrays of strings, NULL → null. */
const TEXT_ARRAY_OID: number = 1009;
const parseTextArray = pg.types.getTypeParser(TEXT_ARRAY_OID) as (text: string) => unknown;
const mapArray = (v: unknown, p: (text: string) => unknown): unknown =>
  Array.isArray(v) ? v.map((e) => mapArray(e, p)) : v === null ? null : p(v as string);

const typeParsers = {
  getTypeParser(oid: number, format?: string): (text: string) => unknown {
    const p = TEXT_PARSERS[oid];
    if (p !== undefined) return p;
    const elem = ARRAY_ELEMENT_OID[oid];
    if (elem !== undefined) {
      const pe = TEXT_PARSERS[elem]!;
      return (text) => mapArray(parseTextArray(text), pe);
    }
    return pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
  },
};

/** PostgreSQL's "cached plan must not change result type" (feature_not_supported on a prepared statement). */
const isStaleCachedPlan = (err: unknown): boolean =>
  sqlstateOf(err) === '0A000' && err instanceof Error && err.message.includes('cached plan must not change result type');

/** PostgreSQL or CockroachDB through a pg Pool. */
export class PgClient implements SqlClient {
  readonly backend = 'postgres' as const;
  get connections(): number {
    return this.opts.max;
  }
  private readonly pool: pg.Pool;
  private relaxed: Promise<SqlClient> | null = null;

  constructor(private readonly opts: PgClientOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.max,
      options: opts.asyncCommit === true ? '-c TimeZone=UTC -c synchronous_commit=off' : '-c TimeZone=UTC',
      types: typeParsers as unknown as pg.CustomTypesConfig,
    });
    // An idle client losing its connection (backend terminated) must not crash the process;
    // the pool discards it and the next checkout gets a fresh one.
    this.pool.on('error', () => {});
    // Nor a client the pool has just released with an error, or one between pool.query's own
    // listener (`once`) and its release: a second error event there (the FATAL 57P01 of a
    // terminated backend, then the socket's end) had no listener and stopped the process.
    // Queries still get their own errors; the pool still drops broken clients.
    this.pool.on('connect', (client) => {
      client.on('error', () => {});
    });
  }

  async query<R>(sql: string, params?: readonly unknown[], preparedName?: string, signal?: AbortSignal): Promise<QueryResult<R>> {
    if (signal !== undefined) return this.cancellableQuery<R>(sql, params, preparedName, signal);
    let res: pg.QueryResult;
    if (preparedName === undefined) res = await this.pool.query(sql, params as unknown[] | undefined);
    else {
      try {
        res = await this.pool.query({ name: preparedName, text: sql, values: params as unknown[] | undefined });
      } catch (err) {
        // A statement prepared for an older publication whose column changed type since (a changeType contract):
        // PostgreSQL refuses the cached plan; the same text unprepared gets a fresh one, so that request is still served.
        if (!isStaleCachedPlan(err)) throw err;
        res = await this.pool.query(sql, params as unknown[] | undefined);
      }
    }
    return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
  }

  /**
   * A statement of a request that may end early (its deadline, its client gone): on abort,
   * PostgreSQL's cancel request (a separate short connection carrying the backend's key; no
   * pool slot) stops it. The connection of an aborted statement is then discarded, not
   * returned to the pool: a cancel that lands late would otherwise hit the next borrower's
   * statement. Same connection checkout as pool.query, so no extra round trip.
   */
  private async cancellableQuery<R>(sql: string, params: readonly unknown[] | undefined, preparedName: string | undefined, signal: AbortSignal): Promise<QueryResult<R>> {
    signal.throwIfAborted();
    const client = await this.pool.connect();
    let broken = false;
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    const cancel = (): void => {
      broken = true;
      cancelRunningStatement(this.opts.connectionString, client);
    };
    try {
      signal.throwIfAborted();
      signal.addEventListener('abort', cancel, { once: true });
      const values = params as unknown[] | undefined;
      const res = await (preparedName === undefined ? client.query(sql, values) : client.query({ name: preparedName, text: sql, values }).catch((err: unknown) => {
        if (!isStaleCachedPlan(err)) throw err;
        return client.query(sql, values);
      }));
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    } catch (err) {
      // 57014 query_canceled: the caller learns why (deadline, client gone) from the signal.
      if (signal.aborted) throw signal.reason;
      throw err;
    } finally {
      signal.removeEventListener('abort', cancel);
      client.off('error', onError);
      client.release(broken);
    }
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return retrySerializable(() => this.retryLostConnection(() => this.attempt(fn)));
  }

  /**
   * A connection lost before COMMIT was sent rolled the transaction back on
   * the server, so running it again on a fresh connection is safe. A loss
   * during COMMIT is ambiguous and surfaces to the caller (as retryable).
   */
  private async retryLostConnection<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (err) {
        const lostBeforeCommit = (err as { plinthBeforeCommit?: boolean }).plinthBeforeCommit === true;
        if (attempt >= LOST_CONNECTION_ATTEMPTS || !lostBeforeCommit || !isConnectionError(err)) throw err;
      }
    }
  }

  private async attempt<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    // While checked out, pg-pool no longer listens for the client's 'error' event; a backend
    // terminated between queries would then emit it unhandled and kill the process.
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    let committing = false;
    try {
      await client.query('BEGIN');
      const tx: SqlExecutor = {
        query: async <R>(sql: string, params?: readonly unknown[], preparedName?: string) => {
          const res = preparedName === undefined
            ? await client.query(sql, params as unknown[] | undefined)
            : await client.query({ name: preparedName, text: sql, values: params as unknown[] | undefined });
          return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
        },
      };
      const out = await fn(tx);
      committing = true;
      await client.query('COMMIT');
      return out;
    } catch (err) {
      if (!committing && typeof err === 'object' && err !== null) (err as { plinthBeforeCommit?: boolean }).plinthBeforeCommit = true;
      if (!broken) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true; // connection is gone; drop it from the pool
        }
      }
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /**
   * A client whose commits do not wait for the WAL flush, for derived writes whose loss in a
   * crash is harmless: moving outbox rows into the event log (the outbox rows come back and
   * are moved again: each transaction is all or nothing) and audit batches (already buffered,
   * ADR 0003). Entity writes never use it: their 201 means durable. PostgreSQL flushes WAL in
   * order, so a synchronous commit that follows also makes every earlier one durable.
   * CockroachDB has no such setting: there this is the client itself.
   */
  relaxedDurability(): Promise<SqlClient> {
    this.relaxed ??= (async () => {
      const v = await this.pool.query<{ v: string }>('SELECT version() AS v');
      if (/cockroach/i.test(v.rows[0]?.v ?? '')) return this;
      return new PgClient({ ...this.opts, max: RELAXED_POOL_SIZE, asyncCommit: true });
    })();
    return this.relaxed;
  }

  async close(): Promise<void> {
    const relaxed = this.relaxed === null ? null : await this.relaxed.catch(() => null);
    if (relaxed !== null && relaxed !== this) await relaxed.close();
    await this.pool.end();
  }
}
