import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CREATED_PREFIX, ENTITY_NAME } from './item-model.js';

/** A scratch PostgreSQL database created for one run. */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** CREATE DATABASE plinth_bench_<random> through the admin connection. */
export async function createScratchDatabase(adminUrl: string): Promise<ScratchDatabase> {
  const name = `plinth_bench_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  let dropped = false;
  return {
    name,
    url: withDatabase(adminUrl, name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

function qualifiedTable(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"."${ENTITY_NAME}"`;
}

/** Row count and planner statistics, so the server and the baseline see the same table state. */
export async function analyzeItems(url: string, schema: string): Promise<number> {
  return withClient(url, async (c) => {
    await c.query(`VACUUM ANALYZE ${qualifiedTable(schema)}`);
    const res = await c.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${qualifiedTable(schema)}`);
    return Number(res.rows[0]?.n ?? 0);
  });
}

/** Remove the rows the create workload added (seeded rows stay). */
export async function deleteCreatedItems(url: string, schema: string): Promise<number> {
  return withClient(url, async (c) => {
    const res = await c.query(`DELETE FROM ${qualifiedTable(schema)} WHERE "name" LIKE $1`, [`${CREATED_PREFIX}%`]);
    return res.rowCount ?? 0;
  });
}
