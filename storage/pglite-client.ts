import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { QueryResult, SqlClient, SqlExecutor } from './sql-client.js';
import { TEXT_PARSERS } from './type-parsers.js';
import { retrySerializable } from './retry.js';
import { freshClusterTarball } from './pglite-template.js';

/**
 * shared_buffers for the embedded database. PostgreSQL's default, 128MB, does not fit PGlite's
 * 128 MiB initial WASM memory: the memory grows to 189 MiB, the grow leaves ~150 MB resident,
 * and WASM memory never shrinks. 16MB fits, and a small node's hot pages fit in it; a miss is
 * one read from the data directory (OS page cache, or PGlite's in-memory file system), with no
 * measurable latency cost (docs/performance.md, "Embedded memory (PGlite)").
 */
export const PGLITE_DEFAULT_SHARED_BUFFERS_MB = 16;

export interface PgliteOptions {
  /** shared_buffers in MiB (PGLITE_SHARED_BUFFERS_MB); default PGLITE_DEFAULT_SHARED_BUFFERS_MB. */
  sharedBuffersMb?: number;
}

/**
 * pg's rowCount is the command tag's count: rows returned by SELECT (or by a
 * data-modifying CTE under one), rows changed by INSERT/UPDATE/DELETE. PGlite's
 * affectedRows is 0 for SELECT, so rows that came back win.
 */
const rowCountOf = (res: { rows: unknown[]; affectedRows?: number }): number =>
  res.rows.length > 0 ? res.rows.length : (res.affectedRows ?? 0);

/**
 * Embedded PostgreSQL (PGlite, in-process WASM). One connection: PGlite
 * serializes queries and transactions internally, which is exactly the
 * isolation we need for a single-node default.
 */
export class PgliteClient implements SqlClient {
  readonly backend = 'pglite' as const;
  readonly connections = 1;

  private constructor(private readonly db: PGlite) {}

  /** dataDir undefined → in-memory (tests). */
  static async open(dataDir: string | undefined, options: PgliteOptions = {}): Promise<PgliteClient> {
    if (dataDir !== undefined) {
      // Owner-only: the database files hold signing keys and the secrets master key.
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    }
    const sharedBuffersMb = options.sharedBuffersMb ?? PGLITE_DEFAULT_SHARED_BUFFERS_MB;
    // In memory, start from a fresh cluster's tarball rather than initdb (pglite-template.ts).
    const template = dataDir === undefined ? await freshClusterTarball() : null;
    const db = new PGlite({
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(template === null ? {} : { loadDataDir: template }),
      parsers: TEXT_PARSERS,
      // Command-line settings: applied at every start, over the data directory's postgresql.conf,
      // which stays untouched. startParams replaces PGlite's defaults, so they are kept first.
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`],
    });
    await db.waitReady;
    await db.exec("SET TIME ZONE 'UTC'");
    return new PgliteClient(db);
  }

  async query<R>(sql: string, params?: readonly unknown[], _preparedName?: string, signal?: AbortSignal): Promise<QueryResult<R>> {
    // One connection, in-process: a running statement cannot be interrupted (statement_timeout never fires in
    // the WASM build), so an aborted request only stops before its next statement.
    signal?.throwIfAborted();
    const res = await this.db.query<R>(sql, params as unknown[] | undefined);
    return { rows: res.rows, rowCount: rowCountOf(res) };
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return retrySerializable(() =>
      this.db.transaction(async (t) => {
        const tx: SqlExecutor = {
          query: async <R>(sql: string, params?: readonly unknown[]) => {
            const res = await t.query<R>(sql, params as unknown[] | undefined);
            return { rows: res.rows, rowCount: rowCountOf(res) };
          },
        };
        return fn(tx);
      }),
    );
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
