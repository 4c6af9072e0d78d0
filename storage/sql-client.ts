/**
 * One SQL client interface for every backend. The SQL we send is the subset
 * PostgreSQL 15+, CockroachDB 23+ and PGlite (PostgreSQL 18) all run: no
 * advisory locks, no LISTEN/NOTIFY in correctness paths.
 *
 * Rows come back with one set of value conventions on every backend (see
 * type-parsers.ts): timestamptz as ISO-8601 UTC strings, numeric as strings,
 * int8 as strings, jsonb parsed.
 */
/**
 * Bind parameters one statement may carry: the wire protocol counts them in
 * 16 bits, and a driver sending more wraps the count (PostgreSQL then refuses
 * the Bind message with 08P01). Statements built from request data split
 * below this (runtime/operations/entity/insert.ts).
 */
export const MAX_SQL_PARAMS = 65_535;

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface SqlExecutor {
  /**
   * `preparedName`: run as a named prepared statement (PostgreSQL parses and plans it once per
   * connection). Only for a fixed text compiled once, e.g. per publication: a name always stands
   * for one text, and names are never reused for another. PGlite ignores it.
   * `signal`: the request this statement serves; once it aborts, the statement is not started,
   * and PostgreSQL cancels it if it is running (rejecting with the signal's reason). PGlite
   * cannot interrupt a running statement (docs/graphql.md "Time per request").
   */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], preparedName?: string, signal?: AbortSignal): Promise<QueryResult<R>>;
}

export interface SqlClient extends SqlExecutor {
  readonly backend: 'pglite' | 'postgres';
  /** Statements that can run at once (the pool's size; PGlite: 1). */
  readonly connections: number;
  /** Runs a script of several statements (DDL, migrations). No parameters. */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn in one transaction. Retries the whole function on serialization
   * failure (SQLSTATE 40001), so fn must be safe to run again.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * A client for derived background writes whose commits need not wait for the disk (see
   * PgClient); absent where it would make no difference (PGlite: one connection).
   */
  relaxedDurability?(): Promise<SqlClient>;
  close(): Promise<void>;
}
