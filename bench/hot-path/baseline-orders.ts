/**
 * The bare baseline of issue 9: node:http + one pg.Pool serving W1/W2/W3 with hand-written
 * SQL on the very table the Plinth server uses. No framework, no auth, no audit; it validates
 * only what the SQL needs. `BASELINE_PREPARED=1` uses named prepared statements.
 *
 * Env: PORT, HOST, DATABASE_URL, BASELINE_SCHEMA, PG_POOL_MAX (default 10), BASELINE_PREPARED.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';
import { ENTITY_PATH, STATUSES, qualifiedTable } from './order-model.js';

const databaseUrl = process.env.DATABASE_URL;
const schema = process.env.BASELINE_SCHEMA;
if (databaseUrl === undefined || schema === undefined) {
  console.error('baseline-orders: DATABASE_URL and BASELINE_SCHEMA are required');
  process.exit(2);
}
const prepared = process.env.BASELINE_PREPARED === '1';
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.PG_POOL_MAX ?? 10), options: '-c TimeZone=UTC' });
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

function send(res: ServerResponse, status: number, body: unknown, extra?: Record<string, string>): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), 'x-service-correlation-id': randomUUID(), ...extra });
  res.end(json);
}

const fail = (res: ServerResponse, status: number, reasonCode: string): void => send(res, status, { error: { code: status === 404 ? 'NOT_FOUND' : 'VALIDATION_FAILED', reasonCode } });

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://baseline');
  const path = url.pathname;
  if (req.method === 'GET' && path === '/api/health') return send(res, 200, { status: 'ok' });
  if (req.method === 'GET' && path.startsWith(`${BASE}/`)) {
    const id = path.slice(BASE.length + 1);
    if (!UUID_RE.test(id)) return fail(res, 404, 'Entity.NotFound');
    const row = (await query('get', [id])).rows[0];
    if (row === undefined) return fail(res, 404, 'Entity.NotFound');
    return send(res, 200, { data: row }, { etag: `"${row.concurrencyToken}"` });
  }
  if (req.method === 'GET' && path === BASE) {
    let status: unknown;
    try {
      status = (JSON.parse(url.searchParams.get('filter') ?? '{}') as { status?: { eq?: unknown } }).status?.eq;
    } catch {
      return fail(res, 422, 'Request.MalformedFilter');
    }
    if (typeof status !== 'string' || !STATUS.has(status)) return fail(res, 422, 'Filter.Unsupported');
    if (url.searchParams.get('sort') !== '-createdAt') return fail(res, 422, 'Sort.Unsupported');
    const rows = (await query('list', [status])).rows;
    const data = rows.slice(0, 20);
    const last = data[data.length - 1];
    const next = rows.length > 20 && last !== undefined ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : undefined;
    return send(res, 200, { data, page: { number: 1, size: 20, next } });
  }
  if (req.method === 'POST' && path === BASE) {
    let b: { customerName?: unknown; status?: unknown; total?: unknown; qty?: unknown };
    try {
      b = JSON.parse(await readBody(req)) as typeof b;
    } catch {
      return fail(res, 422, 'Request.MalformedJson');
    }
    if (typeof b.customerName !== 'string' || typeof b.status !== 'string' || !STATUS.has(b.status) ||
        typeof b.total !== 'string' || !/^-?\d+(\.\d+)?$/.test(b.total) || !Number.isInteger(b.qty)) {
      return fail(res, 422, 'Order.InvalidInput');
    }
    const row = (await query('insert', [b.customerName, b.status, b.total, b.qty])).rows[0];
    return send(res, 201, { data: row }, { etag: `"${row.concurrencyToken}"` });
  }
  req.resume();
  fail(res, 404, 'Route.Unknown');
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    console.error('baseline-orders:', (err as Error).message);
    if (!res.headersSent) send(res, 500, { error: { code: 'INTERNAL' } });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => console.log('baseline-orders listening'));

function shutdown(): void {
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 3_000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
