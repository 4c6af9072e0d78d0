import type { SqlClient } from './sql-client.js';
import { SQLSTATE, sqlstateOf } from './sql-errors.js';

import { MIGRATIONS, PLATFORM_SCHEMA } from './platform-migrations/index.js';

export { PLATFORM_SCHEMA } from './platform-migrations/index.js';

const S = PLATFORM_SCHEMA;

export const LATEST_PLATFORM_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Applies pending platform migrations. Safe when several nodes start at once:
 * each migration claims its version row first, inside its own transaction, so
 * a second node blocks on that row and then skips it.
 */
export async function migratePlatform(db: SqlClient): Promise<number[]> {
  await createIfNotExists(db, `CREATE SCHEMA IF NOT EXISTS ${S}`);
  await createIfNotExists(
    db,
    `CREATE TABLE IF NOT EXISTS ${S}.schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const done = new Set(
    (await db.query<{ version: number }>(`SELECT version FROM ${S}.schema_migrations`)).rows.map((r) => Number(r.version)),
  );
  const applied: number[] = [];
  let cockroach: boolean | null = null;
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    if (m.cockroachStatements !== undefined && cockroach === null) cockroach = await isCockroach(db);
    const statements = cockroach === true && m.cockroachStatements !== undefined ? m.cockroachStatements : m.statements;
    try {
      await db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${S}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        for (const stmt of statements) await tx.query(stmt);
      });
      applied.push(m.version);
    } catch (err) {
      // Only a clash on the version row means another node applied it; any other failure is real.
      const constraint = (err as { constraint?: string }).constraint;
      if (sqlstateOf(err) !== SQLSTATE.UNIQUE_VIOLATION || constraint !== 'schema_migrations_pkey') throw err;
    }
  }
  return applied;
}

async function isCockroach(db: SqlClient): Promise<boolean> {
  if (db.backend !== 'postgres') return false;
  const v = await db.query<{ v: string }>('SELECT version() AS v');
  return /cockroach/i.test(v.rows[0]?.v ?? '');
}

/**
 * Two sessions running the same CREATE … IF NOT EXISTS at once race on the
 * catalog's unique index: the loser waits for the winner's commit and gets 23505
 * (pg_namespace_nspname_index, pg_type_typname_nsp_index). Run again, it sees
 * the committed object and does nothing.
 */
async function createIfNotExists(db: SqlClient, sql: string): Promise<void> {
  try {
    await db.exec(sql);
  } catch (err) {
    // Two nodes racing on IF NOT EXISTS: the loser sees a catalog clash (23505 on pg_namespace/pg_type,
    // or 42710/42P07/42P06 "already exists"). By then the object exists, so running it again is a no-op.
    const code = sqlstateOf(err);
    if (code !== SQLSTATE.UNIQUE_VIOLATION && code !== '42710' && code !== '42P07' && code !== '42P06') throw err;
    await db.exec(sql);
  }
}
