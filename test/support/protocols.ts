/**
 * One entity's operations through each protocol, answered in one form: rows
 * as REST spells them (field names, value formats), pages with their next
 * cursor and total, refusals as the canonical `{ code, reasonCode }`. The
 * cross-protocol differential suite (test/contracts/protocol-differential.test.ts)
 * compares what the protocols answer for the same calls.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from './client.js';

export type Row = Record<string, unknown>;
export interface Refusal { refused: { code: string; reasonCode: string } }
export interface Page { rows: Row[]; next: string | null; total: number | null }
export type Answer<T> = T | Refusal;

export interface ListCall {
  filter: unknown;
  sort: string;
  pageSize: number;
  cursor?: string | null;
  includeTotal?: boolean;
}

/** What the suite calls on the `Order` entity, through one protocol, as one caller. */
export interface Protocol {
  name: string;
  list(c: ListCall): Promise<Answer<Page>>;
  get(id: string): Promise<Answer<Row>>;
  create(input: Row): Promise<Answer<Row>>;
  update(id: string, input: Row, ifMatch?: string): Promise<Answer<Row>>;
  remove(id: string): Promise<Answer<{ id: string; deleted: boolean }>>;
  close(): Promise<void>;
}

export const isRefusal = (a: unknown): a is Refusal => typeof a === 'object' && a !== null && 'refused' in a;

const refusal = (code: unknown, reasonCode: unknown): Refusal => ({ refused: { code: String(code), reasonCode: String(reasonCode) } });

/** REST: the reference. */
export function restProtocol(client: Client): Protocol {
  const answer = <T>(r: { status: number; body: any }, pick: (b: any) => T): Answer<T> =>
    r.status >= 400 ? refusal(r.body?.error?.code, r.body?.error?.reasonCode) : pick(r.body);
  return {
    name: 'REST',
    async list(c) {
      const q = new URLSearchParams({ sort: c.sort, pageSize: String(c.pageSize) });
      if (c.filter !== null) q.set('filter', JSON.stringify(c.filter));
      if (c.cursor != null) q.set('cursor', c.cursor);
      if (c.includeTotal === true) q.set('includeTotal', 'true');
      return answer(await client.get(`/api/orders?${q}`), (b) => ({ rows: b.data, next: b.page.next ?? null, total: b.page.totalCount ?? null }));
    },
    async get(id) { return answer(await client.get(`/api/orders/${encodeURIComponent(id)}`), (b) => b.data); },
    async create(input) { return answer(await client.post('/api/orders', input), (b) => b.data); },
    async update(id, input, ifMatch) {
      return answer(await client.request('PATCH', `/api/orders/${encodeURIComponent(id)}`, input, ifMatch === undefined ? {} : { 'if-match': ifMatch }), (b) => b.data);
    },
    async remove(id) {
      const r = await client.delete(`/api/orders/${encodeURIComponent(id)}`);
      return r.status >= 400 ? refusal(r.body?.error?.code, r.body?.error?.reasonCode) : { id, deleted: true };
    },
    async close() {},
  };
}

/** The reason code of a GraphQL read that answered null for a missing row. */
export const GRAPHQL_NULL = 'GraphQL.Null';

/** GraphQL's names for the suite's enum fields (`paid` ↔ `PAID`) and sort keys (`-placedAt` → `{ field: PLACED_AT, direction: DESC }`). */
const ENUM_FIELDS = new Set(['status', 'tier']);
const FILTER_OPS = new Set(['eq', 'ne', 'in', 'gt', 'lt', 'between']);

function toGraphQLFilter(f: unknown, key = ''): unknown {
  if (Array.isArray(f)) return f.map((x) => toGraphQLFilter(x, key));
  if (typeof f === 'object' && f !== null) {
    return Object.fromEntries(Object.entries(f).map(([k, v]) => [k, toGraphQLFilter(v, ENUM_FIELDS.has(k) ? k : FILTER_OPS.has(k) ? key : '')]));
  }
  return typeof f === 'string' && ENUM_FIELDS.has(key) ? f.toUpperCase() : f;
}

const toGraphQLSort = (sort: string): Array<{ field: string; direction: string }> =>
  sort.split(',').map((k) => ({ field: k.replace(/^-/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase(), direction: k.startsWith('-') ? 'DESC' : 'ASC' }));

/** A GraphQL row as REST spells it: enum values lower-cased, a reference (selected as `customer { id }`) as the related id. */
const fromGraphQLRow = (row: Row | null): Row | null => row === null ? null : Object.fromEntries(Object.entries(row).map(([k, v]) => [
  k, ENUM_FIELDS.has(k) && typeof v === 'string' ? v.toLowerCase() : typeof v === 'object' && v !== null && 'id' in v ? (v as { id: unknown }).id : v,
]));

/**
 * GraphQL over POST /graphql: `fields` are the selection (REST's columns of
 * the entity); a reference field in `references` resolves to the related
 * object (CONTRACT: GraphQL relations), so it is selected as `customer { id }`.
 */
export function graphqlProtocol(client: Client, fields: readonly string[], references: ReadonlySet<string> = new Set()): Protocol {
  const selection = fields.map((f) => (references.has(f) ? `${f} { id }` : f)).join(' ');
  const run = async <T>(query: string, variables: Record<string, unknown>, pick: (data: any) => T): Promise<Answer<T>> => {
    const r = await client.post('/graphql', { query, variables });
    const e = r.body?.errors?.[0];
    if (e !== undefined) return refusal(e.extensions?.code, e.extensions?.reasonCode);
    return pick(r.body.data);
  };
  const enumInput = (input: Row): Row => Object.fromEntries(Object.entries(input).map(([k, v]) => [k, ENUM_FIELDS.has(k) && typeof v === 'string' ? v.toUpperCase() : v]));
  return {
    name: 'GraphQL',
    list: (c) => run(
      `query($f: OrderFilter, $n: Int, $a: String, $s: [OrderSort!]) { orders(filter: $f, first: $n, after: $a, sort: $s) { ${c.includeTotal === true ? 'totalCount' : ''} pageInfo { hasNextPage endCursor } edges { node { ${selection} } } } }`,
      { f: c.filter === null ? null : toGraphQLFilter(c.filter), n: c.pageSize, a: c.cursor ?? null, s: toGraphQLSort(c.sort) },
      (d) => ({ rows: d.orders.edges.map((e: any) => fromGraphQLRow(e.node)!), next: d.orders.pageInfo.hasNextPage ? d.orders.pageInfo.endCursor : null, total: d.orders.totalCount ?? null }),
    ),
    // `order(id:)` is nullable: a missing row reads as null, not as an error (CONTRACT makes only update
    // and delete of a missing row NOT_FOUND errors). It maps to NOT_FOUND with no reason code of its own.
    get: (id) => run(`query($id: ID!) { order(id: $id) { ${selection} } }`, { id }, (d) => fromGraphQLRow(d.order) ?? refusal('NOT_FOUND', GRAPHQL_NULL)),
    create: (input) => run(`mutation($i: OrderCreateInput!) { createOrder(input: $i) { ${selection} } }`, { i: enumInput(input) }, (d) => fromGraphQLRow(d.createOrder)!),
    update: (id, input, ifMatch) => run(
      `mutation($id: ID!, $i: OrderUpdateInput!, $m: String) { updateOrder(id: $id, input: $i, ifMatch: $m) { ${selection} } }`,
      { id, i: enumInput(input), m: ifMatch ?? null }, (d) => fromGraphQLRow(d.updateOrder)!,
    ),
    remove: (id) => run('mutation($id: ID!) { deleteOrder(id: $id) { id deleted } }', { id }, (d) => d.deleteOrder),
    async close() {},
  };
}

/** MCP over the official SDK client: `structuredContent` is REST's body. */
export async function mcpProtocol(endpoint: string, token: string): Promise<Protocol> {
  const client = new McpClient({ name: 'plinth-differential', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  const call = async <T>(name: string, args: Record<string, unknown>, pick: (body: any) => T): Promise<Answer<T>> => {
    try {
      const r = await client.callTool({ name, arguments: args });
      return pick(r.structuredContent);
    } catch (err) {
      if (err instanceof McpError) {
        const data = err.data as { serviceCode?: string; reasonCode?: string } | undefined;
        return refusal(data?.serviceCode ?? `jsonrpc:${err.code}`, data?.reasonCode ?? '');
      }
      throw err;
    }
  };
  return {
    name: 'MCP',
    list: (c) => call('Order.list', {
      ...(c.filter === null ? {} : { filter: c.filter }), sort: c.sort, pageSize: c.pageSize,
      ...(c.cursor == null ? {} : { cursor: c.cursor }), ...(c.includeTotal === true ? { includeTotal: true } : {}),
    }, (b) => ({ rows: b.data, next: b.page.next ?? null, total: b.page.totalCount ?? null })),
    get: (id) => call('Order.get', { id }, (b) => b.data),
    create: (input) => call('Order.create', { input }, (b) => b.data),
    update: (id, input, ifMatch) => call('Order.update', { id, input, ...(ifMatch === undefined ? {} : { ifMatch }) }, (b) => b.data),
    remove: (id) => call('Order.delete', { id }, (b) => b.data),
    close: () => client.close(),
  };
}
