/**
 * The bare baseline: node:http + one pg.Pool answering the three benchmarked routes with
 * hand-written SQL against the very table the Plinth server uses. No framework, no auth,
 * no validation beyond what the SQL needs. Run as its own process by the harness.
 *
 * Env: PORT, HOST, DATABASE_URL, BASELINE_SCHEMA (the project's PostgreSQL schema),
 * PG_POOL_MAX (default 10).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';
import { ENTITY_NAME, ENTITY_PATH } from './item-model.js';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const databaseUrl = process.env.DATABASE_URL;
const schema = process.env.BASELINE_SCHEMA;
const poolMax = Number(process.env.PG_POOL_MAX ?? 10);
if (databaseUrl === undefined || schema === undefined) {
  console.error('baseline-server: DATABASE_URL and BASELINE_SCHEMA are required');
  process.exit(2);
}

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax, options: '-c TimeZone=UTC' });
pool.on('error', () => {});

const table = `"${schema.replace(/"/g, '""')}"."${ENTITY_NAME}"`;
const COLUMNS = `id, "name", "category", "price", "qty", "createdAt", "updatedAt", "concurrencyToken"`;
const SQL_GET = `SELECT ${COLUMNS} FROM ${table} WHERE id = $1`;
const SQL_LIST = `SELECT ${COLUMNS} FROM ${table} WHERE "category" = $1 ORDER BY "qty" DESC, id LIMIT $2`;
const SQL_LIST_ALL = `SELECT ${COLUMNS} FROM ${table} ORDER BY "qty" DESC, id LIMIT $1`;
const SQL_INSERT =
  `INSERT INTO ${table} (id, "name", "category", "price", "qty", "createdAt", "updatedAt", "concurrencyToken") ` +
  `VALUES (gen_random_uuid(), $1, $2, $3, $4, now(), now(), gen_random_uuid()) RETURNING ${COLUMNS}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CATEGORIES = new Set(['a', 'b', 'c', 'd']);
const BASE = `/api/${ENTITY_PATH}`;

interface Row {
  id: string;
  concurrencyToken: string;
  [k: string]: unknown;
}

function send(res: ServerResponse, status: number, body: unknown, extra?: Record<string, string>): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
    'x-service-correlation-id': randomUUID(),
    ...extra,
  });
  res.end(json);
}

function fail(res: ServerResponse, status: number, code: string, reasonCode: string): void {
  send(res, status, { error: { code, reasonCode } });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function getOne(res: ServerResponse, id: string): Promise<void> {
  if (!UUID_RE.test(id)) return fail(res, 404, 'NOT_FOUND', 'Entity.NotFound');
  const { rows } = await pool.query<Row>(SQL_GET, [id]);
  const row = rows[0];
  if (row === undefined) return fail(res, 404, 'NOT_FOUND', 'Entity.NotFound');
  send(res, 200, { data: row }, { etag: `"${row.concurrencyToken}"` });
}

async function list(res: ServerResponse, query: URLSearchParams): Promise<void> {
  const pageSize = Math.min(Math.max(Number(query.get('pageSize') ?? 20) || 20, 1), 100);
  let category: string | undefined;
  const rawFilter = query.get('filter');
  if (rawFilter !== null) {
    let filter: { category?: { eq?: unknown } };
    try {
      filter = JSON.parse(rawFilter) as typeof filter;
    } catch {
      return fail(res, 422, 'VALIDATION_FAILED', 'Request.MalformedFilter');
    }
    const eq = filter?.category?.eq;
    if (typeof eq !== 'string' || !CATEGORIES.has(eq)) return fail(res, 422, 'VALIDATION_FAILED', 'Filter.Unsupported');
    category = eq;
  }
  const sort = query.get('sort');
  if (sort !== null && sort !== '-qty') return fail(res, 422, 'VALIDATION_FAILED', 'Sort.Unsupported');
  // One extra row tells whether there is a next page, as a cursor-paginating server would.
  const { rows } =
    category === undefined
      ? await pool.query<Row>(SQL_LIST_ALL, [pageSize + 1])
      : await pool.query<Row>(SQL_LIST, [category, pageSize + 1]);
  const more = rows.length > pageSize;
  const data = more ? rows.slice(0, pageSize) : rows;
  const last = data[data.length - 1];
  const next = more && last !== undefined ? Buffer.from(JSON.stringify([last.qty, last.id])).toString('base64url') : null;
  send(res, 200, { data, page: { next, pageSize } });
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let input: { name?: unknown; category?: unknown; price?: unknown; qty?: unknown };
  try {
    input = JSON.parse(await readBody(req)) as typeof input;
  } catch {
    return fail(res, 422, 'VALIDATION_FAILED', 'Request.MalformedJson');
  }
  const { name, category, price, qty } = input ?? {};
  if (
    typeof name !== 'string' ||
    typeof category !== 'string' ||
    !CATEGORIES.has(category) ||
    typeof price !== 'string' ||
    !/^-?\d+(\.\d+)?$/.test(price) ||
    typeof qty !== 'number' ||
    !Number.isInteger(qty)
  ) {
    return fail(res, 422, 'VALIDATION_FAILED', 'Entity.InvalidInput');
  }
  const { rows } = await pool.query<Row>(SQL_INSERT, [name, category, price, qty]);
  send(res, 201, { data: rows[0], meta: {} });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://baseline');
  const path = url.pathname;
  if (req.method === 'GET' && path === '/api/health') return send(res, 200, { status: 'ok' });
  if (path === BASE) {
    if (req.method === 'GET') return list(res, url.searchParams);
    if (req.method === 'POST') return create(req, res);
  } else if (req.method === 'GET' && path.startsWith(`${BASE}/`)) {
    return getOne(res, decodeURIComponent(path.slice(BASE.length + 1)));
  }
  req.resume();
  fail(res, 404, 'NOT_FOUND', 'Route.Unknown');
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    console.error('baseline-server:', (err as Error).message);
    if (!res.headersSent) fail(res, 500, 'INTERNAL', 'Internal.Unexpected');
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;

server.listen(port, host, () => {
  const addr = server.address();
  console.log(`baseline listening on ${host}:${typeof addr === 'object' && addr !== null ? addr.port : port}`);
});

function shutdown(): void {
  server.close(() => {
    pool.end().finally(() => process.exit(0));
  });
  server.closeAllConnections();
  setTimeout(() => process.exit(0), 3_000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
