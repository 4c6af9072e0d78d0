/**
 * What the bare baselines answer for W1/W2/W3, whatever their HTTP front end
 * (node:http in baseline-orders.ts, uWebSockets.js in baseline-orders-uws.ts):
 * hand-written SQL on the very table the Plinth server uses, no framework, no
 * auth, no audit; it validates only what the SQL needs. `BASELINE_PREPARED=1`
 * uses named prepared statements.
 *
 * Env: DATABASE_URL, BASELINE_SCHEMA, PG_POOL_MAX (default 10), BASELINE_PREPARED.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ENTITY_PATH, STATUSES, qualifiedTable } from './order-model.js';

export interface Answer {
  status: number;
  json: string;
  headers: Record<string, string>;
}

const databaseUrl = process.env.DATABASE_URL;
const schema = process.env.BASELINE_SCHEMA;
if (databaseUrl === undefined || schema === undefined) {
  console.error('baseline: DATABASE_URL and BASELINE_SCHEMA are required');
  process.exit(2);
}
const prepared = process.env.BASELINE_PREPARED === '1';
export const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.PG_POOL_MAX ?? 10), options: '-c TimeZone=UTC' });
pool.on('error', () => {});

const table = qualifiedTable(schema);
const COLUMNS = `id, "customerName", "status", "total", "qty", "owner", "createdAt", "updatedAt", "concurrencyToken"`;
const SQL = {
  get: `SELECT ${COLUMNS} FROM ${table} WHERE id = $1`,
  // What a hand-written keyset paginator writes: the (createdAt, id) index serves it backwards.
  list: `SELECT ${COLUMNS} FROM ${table} WHERE "status" = $1 ORDER BY "createdAt" DESC, id DESC LIMIT 21`,
  insert:
    `INSERT INTO ${table} ("customerName", "status", "total", "qty") VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
};

function query(name: keyof typeof SQL, values: unknown[]): Promise<pg.QueryResult> {
  return prepared ? pool.query({ name: `b_${name}`, text: SQL[name], values }) : pool.query(SQL[name], values);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUS = new Set<string>(STATUSES);
const BASE = `/api/${ENTITY_PATH}`;

const answer = (status: number, body: unknown, extra?: Record<string, string>): Answer =>
  ({ status, json: JSON.stringify(body), headers: { 'x-service-correlation-id': randomUUID(), ...extra } });

const fail = (status: number, reasonCode: string): Answer => answer(status, { error: { code: status === 404 ? 'NOT_FOUND' : 'VALIDATION_FAILED', reasonCode } });

/** Whether a request on this method and path has a body the handler reads. */
export const takesBody = (method: string, path: string): boolean => method === 'POST' && path === BASE;

/** The answer to one request; `body` is read only for routes that take one. */
export async function handle(method: string, path: string, search: URLSearchParams, body: () => Promise<string>): Promise<Answer> {
  if (method === 'GET' && path === '/api/health') return answer(200, { status: 'ok' });
  if (method === 'GET' && path.startsWith(`${BASE}/`)) {
    const id = path.slice(BASE.length + 1);
    if (!UUID_RE.test(id)) return fail(404, 'Entity.NotFound');
    const row = (await query('get', [id])).rows[0];
    if (row === undefined) return fail(404, 'Entity.NotFound');
    return answer(200, { data: row }, { etag: `"${row.concurrencyToken}"` });
  }
  if (method === 'GET' && path === BASE) {
    let status: unknown;
    try {
      status = (JSON.parse(search.get('filter') ?? '{}') as { status?: { eq?: unknown } }).status?.eq;
    } catch {
      return fail(422, 'Request.MalformedFilter');
    }
    if (typeof status !== 'string' || !STATUS.has(status)) return fail(422, 'Filter.Unsupported');
    if (search.get('sort') !== '-createdAt') return fail(422, 'Sort.Unsupported');
    const rows = (await query('list', [status])).rows;
    const data = rows.slice(0, 20);
    const last = data[data.length - 1];
    const next = rows.length > 20 && last !== undefined ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : undefined;
    return answer(200, { data, page: { number: 1, size: 20, next } });
  }
  if (takesBody(method, path)) {
    let b: { customerName?: unknown; status?: unknown; total?: unknown; qty?: unknown };
    try {
      b = JSON.parse(await body()) as typeof b;
    } catch {
      return fail(422, 'Request.MalformedJson');
    }
    if (typeof b.customerName !== 'string' || typeof b.status !== 'string' || !STATUS.has(b.status) ||
        typeof b.total !== 'string' || !/^-?\d+(\.\d+)?$/.test(b.total) || !Number.isInteger(b.qty)) {
      return fail(422, 'Order.InvalidInput');
    }
    const row = (await query('insert', [b.customerName, b.status, b.total, b.qty])).rows[0];
    return answer(201, { data: row }, { etag: `"${row.concurrencyToken}"` });
  }
  return fail(404, 'Route.Unknown');
}
