/**
 * Bad input over REST: malformed JSON, wrong types, unknown fields,
 * SQL-looking strings, huge and deep filters, random list parameters, paths
 * and headers, invalid UTF-8, wrong content types and oversize bodies.
 *
 * Every answer is checked the same way (never 5xx, the correlation header,
 * the error envelope with the header's correlationId) and against the exact
 * outcome its generator tagged it with. Successful writes are counted so the
 * end of the suite can prove nothing else was written.
 *
 * Generated inputs are seeded: BAD_INPUT_SEED=<n> reproduces a run (the seed
 * is printed on failure), BAD_INPUT_SHRINK=1 shrinks a counterexample,
 * BAD_INPUT_RUNS=<k> runs every property k times as often.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bootstrapProject, defineEntity, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { abortMidBody, checkReply, describeInput, expectError, expectOk, postChunked, rawRequest, send, type Api } from './bad-input/http.js';
import {
  ABSENT, CUSTOMER_DEF, ENTITY_NAME, ORDER_DEF, csvReasons, customerCaseArb, filterCaseArb, headerCaseArb, httpTrim, intParamReasons,
  forgedCursorArb, listCaseArb, orderCaseArb, pathCaseArb, rawBodyArb, rawBodyReason, relatedFilterArb, sortOutcome, type CustomerCase,
  type EntityKey, type FieldCase, type ListCase, type OrderCase,
  UNSTORABLE_REASON, unstorableFields,
} from './bad-input/gen.js';

const SEED = Number(process.env.BAD_INPUT_SEED ?? 20_250_611);
const SHRINK = process.env.BAD_INPUT_SHRINK === '1';
/** Multiplies every property's run count (longer fuzzing: BAD_INPUT_RUNS=10). */
const RUNS = Math.max(1, Number(process.env.BAD_INPUT_RUNS ?? 1) || 1);
const MiB = 1024 * 1024;
const JSON_CT = { 'content-type': 'application/json' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs one seeded property; on failure prints the seed that reproduces it. */
async function property<T>(name: string, offset: number, arb: fc.Arbitrary<T>, numRuns: number, run: (v: T) => Promise<void>, tally: { runs: number }): Promise<void> {
  const seed = SEED + offset;
  try {
    await fc.assert(fc.asyncProperty(arb, async (v) => {
      tally.runs++;
      await run(v);
    }), { seed, numRuns: numRuns * RUNS, endOnFailure: !SHRINK });
  } catch (err) {
    // fast-check's report carries the counterexample; the assertion that failed is its cause.
    const cause = (err as { cause?: unknown }).cause;
    const report = (err as Error).message;
    const msg = `[bad-input] property "${name}" failed (seed ${seed}); reproduce with BAD_INPUT_SEED=${SEED}${SHRINK ? '' : ', shrink with BAD_INPUT_SHRINK=1'}\n`
      + `${cause instanceof Error ? cause.message : String(cause ?? '')}\n${report.length > 3000 ? `${report.slice(0, 3000)}…` : report}`;
    console.error(msg);
    throw new Error(msg, { cause: err });
  }
}

const setOwn = (o: Record<string, unknown>, k: string, v: unknown): void => {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
};

/** Canonical form of a decimal string, as PostgreSQL's numeric prints it back. */
function normDecimal(s: string): string {
  const m = /^([+-]?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (m === null) return `unparsable:${s}`;
  const int = m[2]!.replace(/^0+(?=\d)/, '');
  const frac = m[3];
  const zero = /^0+$/.test(int) && (frac === undefined || /^0+$/.test(frac));
  return `${m[1] === '-' && !zero ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}`;
}

function assertDecimal(sent: unknown, got: unknown, what: string): void {
  if (typeof sent === 'number') assert.equal(Number(got), sent === 0 ? 0 : sent, `${what}: decimal ${sent} read back as ${String(got)}`);
  else assert.equal(normDecimal(String(got)), normDecimal(String(sent)), `${what}: decimal ${String(sent)} read back as ${String(got)}`);
}

/** A stored customer reads back exactly as sent (SQL-looking strings included). */
function assertCustomerStored(sent: Record<string, unknown>, row: Record<string, any>, what: string): void {
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(sent, k);
  assert.equal(row.email, sent.email, `${what}: email not stored verbatim`);
  assert.equal(row.tier, sent.tier, `${what}: tier`);
  assert.equal(row.age, has('age') ? sent.age : null, `${what}: age`);
  if (has('balance') && sent.balance !== null) assertDecimal(sent.balance, row.balance, what);
  else assert.equal(row.balance, null, `${what}: balance`);
  if (has('since') && sent.since !== null) assert.equal(Date.parse(row.since), Date.parse(sent.since as string), `${what}: since ${String(sent.since)} read back as ${row.since}`);
  else assert.equal(row.since, null, `${what}: since`);
  assert.deepEqual(row.meta, has('meta') ? JSON.parse(JSON.stringify(sent.meta)) : null, `${what}: meta not stored verbatim`);
  assert.equal(row.vip, has('vip') ? sent.vip : false, `${what}: vip`);
}

/** The reason each field broken on purpose must get in the 422's `errors`. */
function expectedFieldReason(fcase: FieldCase): string {
  return fcase.v === ABSENT || fcase.v === null ? 'Required' : 'InvalidValue';
}

function assertFieldErrors(e: { errors?: Array<{ field: string; reasonCode: string }> }, expected: Map<string, string>, entity: string, what: string): void {
  assert.ok(Array.isArray(e.errors), `${what}: a validation 422 lists its errors`);
  const got = new Map(e.errors!.map((x) => [x.field, x.reasonCode]));
  const want = new Map([...expected].map(([f, r]) => [f, `${entity}Validation.${r}`]));
  assert.deepEqual(got, want, `${what}: errors ${describeInput([...got])} instead of ${describeInput([...want])}`);
}

/** A field name as the server shows it: U+0000 and lone surrogates as `\uXXXX`. */
const shownField = (k: string): string => k.replace(/\u0000|\p{Cs}/gu, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);

/** 422 Request.NulCharacter / LoneSurrogate whose `field` is inside one of `roots` (top-level keys holding such text). */
function expectUnstorable(r: Reply, what: string, roots: string[]): void {
  const e = expectError(r, what, 422, UNSTORABLE_REASON);
  const field = e.field ?? '';
  const inside = roots.some((k) => {
    const n = shownField(k);
    return field === n || field.startsWith(`${n}.`) || field.startsWith(`${n}[`) || (field.endsWith('…') && n.startsWith(field.slice(0, -1)));
  });
  assert.ok(inside, `${what}: field '${field}' is not inside ${describeInput(roots)}`);
}

forEachBackend('bad input', (backend) => {
  let server: TestServer;
  let api: Api;
  /** A user holding only entity:Order:* (no read on Customer). */
  let orderUser: Api;
  let scope: { tenant: string; tenantId: string; project: string; projectId: string };
  const tally = { runs: 0 };
  /** Writes that succeeded: the counts the end of the suite must find. */
  const written = { customers: 0, orders: 0 };
  const emails: string[] = [];
  const customerIds: string[] = [];
  let serial = 0;
  const next = (): number => ++serial;
  /** The row If-Match cases write to, with its current concurrency token. */
  const target = { id: '', token: '' };
  /** Real cursors, by the sort they were issued for. */
  const cursors: Record<'default' | '-email', { text: string; key: string }> = {} as never;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
    send(api, 'POST', path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { ...JSON_CT, ...headers } });
  const count = async (collection: EntityKey): Promise<number> => expectOk(await send(api, 'GET', `/api/${collection}/count`), `count ${collection}`).data.count;
  const validCustomer = (tag: string): Record<string, unknown> => ({ email: `${tag}-${next()}@example.test`, tier: 'pro' });
  const created = (kind: 'customer', r: Reply, what: string): Record<string, any> => {
    const row = expectOk(r, what, 201).data;
    written.customers++;
    emails.push(row.email);
    customerIds.push(row.id);
    void kind;
    return row;
  };

  before(async () => {
    server = await startServer({ backend });
    const boot = await bootstrapProject(server.url, server.adminToken);
    scope = { tenant: boot.tenant, tenantId: boot.tenantId, project: boot.project, projectId: boot.projectId };
    await defineEntity(boot.client, CUSTOMER_DEF);
    await defineEntity(boot.client, ORDER_DEF);
    api = { baseUrl: server.url, headers: { authorization: `Bearer ${server.adminToken}`, 'x-service-tenant': boot.tenant, 'x-service-project': boot.project } };
    // A few valid rows first, so references, cursors and If-Match have something real to aim at.
    const batch = expectOk(await post('/api/customers/batch', { items: [validCustomer('seed'), validCustomer('seed'), validCustomer('seed')] }), 'seed batch', 201);
    for (const row of batch.data) {
      written.customers++;
      emails.push(row.email);
      customerIds.push(row.id);
    }
    expectOk(await post('/api/orders', { customer: customerIds[0], total: '10.00', status: 'open' }), 'seed order', 201);
    written.orders++;
    const t = created('customer', await post('/api/customers', validCustomer('if-match-target')), 'if-match target');
    target.id = t.id;
    target.token = t.concurrencyToken;
    const anon: Api = { baseUrl: server.url, headers: { 'x-service-tenant': boot.tenant, 'x-service-project': boot.project } };
    const cred = JSON.stringify({ email: 'order-user@example.test', password: 'long enough pw' });
    expectOk(await send(anon, 'POST', '/api/identity/register', { body: cred, headers: JSON_CT }), 'register the order user', 201);
    const token = expectOk(await send(anon, 'POST', '/api/identity/login', { body: cred, headers: JSON_CT }), 'login').accessToken as string;
    orderUser = { baseUrl: server.url, headers: { ...anon.headers, authorization: `Bearer ${token}` } };
    const subjectId = expectOk(await send(orderUser, 'GET', '/api/identity/me'), 'me').data.subjectId as string;
    expectOk(await post(`/api/projects/${boot.projectId}/capability-grants`, { subjectId, grant: 'entity:Order:*' }), 'grant entity:Order:*', 201);
    for (const [name, sort] of [['default', ''], ['-email', '-email']] as const) {
      const page = expectOk(await send(api, 'GET', `/api/customers?pageSize=1${sort === '' ? '' : `&sort=${sort}`}`), `cursor (${name})`);
      assert.equal(typeof page.page.next, 'string', 'a first page of one row has a next cursor');
      cursors[name] = { text: page.page.next, key: sort === '' ? 'createdAt' : sort };
    }
  });

  after(async () => {
    await server?.close();
  });

  // ------------------------------------------------------------ properties

  it('(1) random text, bytes and wrong-shape JSON as create bodies: 422 with the exact reason, nothing written', async () => {
    const routes = [['customers', false], ['orders', false], ['customers', true], ['orders', true]] as const;
    await property('raw bodies', 1, fc.tuple(fc.constantFrom(...routes), rawBodyArb), 150, async ([[collection, batch], bytes]) => {
      const path = `/api/${collection}${batch ? '/batch' : ''}`;
      const what = `POST ${path} ${describeInput(bytes)} (${describeInput(Buffer.from(bytes).toString('utf8'))})`;
      const r = await send(api, 'POST', path, { body: bytes, headers: JSON_CT });
      expectError(r, what, 422, rawBodyReason(bytes, ENTITY_NAME[collection], batch));
    }, tally);
  });

  it('(2a) customers with wrong types, unknown fields and SQL-looking strings: exact 422/409, or stored verbatim', async () => {
    const FIELDS = ['email', 'tier', 'age', 'balance', 'since', 'meta', 'vip'] as const;
    await property('customer values', 2, customerCaseArb, 170, async (cs: CustomerCase) => {
      const n = next();
      const body: Record<string, unknown> = {};
      const expected = new Map<string, string>();
      let db = false;
      let either = false;
      let dup = false;
      for (const name of FIELDS) {
        const fcase = cs[name];
        let v = fcase.v;
        if (fcase.k === 'dup') {
          v = emails[n % emails.length];
          dup = true;
        } else if (name === 'email' && (fcase.k === 'ok' || fcase.k === 'either')) {
          v = `${String(v)}#${n}`;
        }
        if (fcase.k === 'bad') expected.set(name, expectedFieldReason(fcase));
        if (fcase.k === 'db') db = true;
        if (fcase.k === 'either') either = true;
        if (v !== ABSENT) setOwn(body, name, v);
      }
      for (const x of cs.extra) {
        setOwn(body, x.key, x.value);
        expected.set(x.key, x.reason);
      }
      const text = JSON.stringify(body);
      const what = `POST /api/customers ${describeInput(text)}`;
      const r = await post('/api/customers', text);
      const unstorable = unstorableFields(body);
      if (unstorable.length > 0) return void expectUnstorable(r, what, unstorable);
      if (expected.size > 0) {
        const e = expectError(r, what, 422, /^CustomerValidation\.(UnknownField|ReadOnlyField|Required|InvalidValue)$/);
        assertFieldErrors(e, expected, 'Customer', what);
        return;
      }
      if (db) return void expectError(r, what, 422, 'CustomerValidation.InvalidValue');
      if (dup) {
        const e = expectError(r, what, 409, 'CustomerValidation.UniqueViolation');
        assert.equal(e.field, 'email', `${what}: the conflict names the unique field`);
        return;
      }
      if (either && r.status === 422) return void expectError(r, what, 422, 'CustomerValidation.InvalidValue');
      const row = created('customer', r, what);
      assertCustomerStored(body, row, `${what} (create answer)`);
      const read = await send(api, 'GET', `/api/customers/${row.id}`);
      assertCustomerStored(body, expectOk(read, `${what} (read back)`).data, `${what} (read back)`);
      assert.equal(read.headers.get('etag'), `"${row.concurrencyToken}"`, `${what}: ETag is the concurrency token`);
      const filter = JSON.stringify({ email: { eq: body.email } });
      if (filter.length < 8_000) {
        const found = expectOk(await send(api, 'GET', `/api/customers?filter=${encodeURIComponent(filter)}`), `${what} (filter by email)`);
        assert.deepEqual(found.data.map((x: { id: string }) => x.id), [row.id], `${what}: the email, used as a filter value, finds exactly its row`);
      }
    }, tally);
  });

  it('(2b) orders with bad references, decimals and enums: exact 422, or stored', async () => {
    const FIELDS = ['customer', 'total', 'status'] as const;
    await property('order values', 3, orderCaseArb, 70, async (oc: OrderCase) => {
      const n = next();
      const body: Record<string, unknown> = {};
      const expected = new Map<string, string>();
      let missingRef = false;
      for (const name of FIELDS) {
        const fcase = oc[name];
        let v = fcase.v;
        if (fcase.k === 'existing') {
          const id = customerIds[n % customerIds.length]!;
          v = fcase.v === true ? id.toUpperCase() : id;
        }
        if (fcase.k === 'bad') expected.set(name, expectedFieldReason(fcase));
        if (fcase.k === 'db') missingRef = true;
        if (v !== ABSENT) setOwn(body, name, v);
      }
      for (const x of oc.extra) {
        setOwn(body, x.key, x.value);
        expected.set(x.key, x.reason);
      }
      const text = JSON.stringify(body);
      const what = `POST /api/orders ${describeInput(text)}`;
      const r = await post('/api/orders', text);
      const unstorable = unstorableFields(body);
      if (unstorable.length > 0) return void expectUnstorable(r, what, unstorable);
      if (expected.size > 0) {
        const e = expectError(r, what, 422, /^OrderValidation\.(UnknownField|ReadOnlyField|Required|InvalidValue)$/);
        assertFieldErrors(e, expected, 'Order', what);
        return;
      }
      if (missingRef) {
        const e = expectError(r, what, 422, 'OrderValidation.ReferenceNotFound');
        assert.equal(e.field, 'customer', `${what}: the reference error names the field`);
        return;
      }
      const row = expectOk(r, what, 201).data;
      written.orders++;
      const read = expectOk(await send(api, 'GET', `/api/orders/${row.id}`), `${what} (read back)`).data;
      assert.equal(read.customer, String(body.customer).toLowerCase(), `${what}: customer`);
      assertDecimal(body.total, read.total, what);
      assert.equal(read.status, body.status, `${what}: status`);
    }, tally);
  });

  it('(3) random, deep, wide and huge filters on list and count: 200 or 422 with the exact Filter reason', async () => {
    await property('filters', 4, filterCaseArb, 120, async (fcase) => {
      const q = `filter=${encodeURIComponent(fcase.text)}`;
      const what = `filter on ${fcase.entity}: ${describeInput(fcase.text)} (expect ${fcase.reasons === 'anyFilter' ? '200 or any Filter.*' : fcase.reasons.length === 0 ? '200' : fcase.reasons.join('|')})`;
      const list = await send(api, 'GET', `/api/${fcase.entity}?${q}&includeTotal=true`);
      const cnt = await send(api, 'GET', `/api/${fcase.entity}/count?${q}`);
      for (const r of [list, cnt]) {
        if (fcase.reasons === 'anyFilter') {
          checkReply(r, what);
          if (r.status !== 200) expectError(r, what, 422, /^Filter\./);
        } else if (fcase.reasons.length === 0) expectOk(r, what);
        else {
          const e = expectError(r, what, 422, fcase.reasons);
          assert.ok(e.field === 'filter' || e.field?.startsWith('filter.'), `${what}: the error points into the filter (${e.field})`);
        }
      }
      assert.equal(list.status, cnt.status, `${what}: list and count judge a filter alike`);
      if (list.status === 200) assert.equal(list.body.page.totalCount, cnt.body.data.count, `${what}: totalCount equals count`);
    }, tally);
  });

  it('(4) random sort, fields, include, page, pageSize, includeTotal and cursor values: 200 or the exact Query reason', async () => {
    await property('list parameters', 5, listCaseArb, 90, async (lc: ListCase) => {
      const params = new URLSearchParams();
      const reasons: string[] = [];
      const sort = sortOutcome(lc.entity, lc.sort);
      if ('reason' in sort) reasons.push(sort.reason);
      reasons.push(...csvReasons('fields', lc.entity, lc.fields), ...csvReasons('include', lc.entity, lc.include));
      reasons.push(...intParamReasons('page', lc.page, 1_000_000, 'Query.PageTooLarge'), ...intParamReasons('pageSize', lc.pageSize, 200, 'Query.PageSizeTooLarge'));
      if (lc.includeTotal !== undefined && lc.includeTotal !== 'true' && lc.includeTotal !== 'false') reasons.push('Query.InvalidIncludeTotal');
      let cursorMayBeRefused = false;
      if (lc.cursor !== undefined) {
        if (lc.cursor.kind === 'random') {
          params.set('cursor', lc.cursor.text);
          if (lc.cursor.text !== '') reasons.push('Query.InvalidCursor', 'Query.CursorMismatch');
        } else {
          const real = cursors[lc.cursor.from];
          let text = real.text;
          const decoded = JSON.parse(Buffer.from(real.text, 'base64url').toString('utf8')) as { h: string; v: unknown[]; p: number };
          if (lc.cursor.kind === 'forged') text = Buffer.from(JSON.stringify({ ...decoded, v: lc.cursor.junk })).toString('base64url');
          params.set('cursor', text);
          const sameShape = lc.entity === 'customers' && 'key' in sort && sort.key === real.key;
          if (!sameShape) reasons.push('Query.InvalidCursor', 'Query.CursorMismatch');
          else if (lc.cursor.kind === 'forged') {
            const junk = lc.cursor.junk;
            // Only strings can fit these keys (a timestamp, then a uuid); the type check decides which do.
            if (junk.length !== decoded.v.length || junk.some((x) => typeof x !== 'string')) reasons.push('Query.InvalidCursor');
            else cursorMayBeRefused = true;
          }
        }
      }
      for (const k of ['sort', 'fields', 'include', 'page', 'pageSize', 'includeTotal'] as const) if (lc[k] !== undefined) params.set(k, lc[k]!);
      const path = `/api/${lc.entity}?${params}`;
      // A NUL in any parameter is refused before the parameters are read (a lone surrogate arrives as U+FFFD).
      if ([...new URLSearchParams(params.toString()).values()].some((v) => v.includes('\u0000'))) reasons.splice(0, reasons.length, 'Request.NulCharacter');
      const what = `GET ${path} (expect ${reasons.length === 0 ? '200' : reasons.join('|')})`;
      const r = await send(api, 'GET', path);
      if (reasons.length > 0) return void expectError(r, what, 422, reasons);
      if (cursorMayBeRefused && r.status === 422) return void expectError(r, what, 422, 'Query.InvalidCursor');
      const body = expectOk(r, what);
      const size = lc.pageSize === undefined || lc.pageSize === '' ? 50 : Number(lc.pageSize);
      assert.equal(body.page.size, size, `${what}: page.size`);
      assert.ok(body.data.length <= size, `${what}: no more rows than pageSize`);
      if (lc.includeTotal === 'true') assert.equal(typeof body.page.totalCount, 'number', `${what}: totalCount`);
      const fields = lc.fields?.split(',').map((s) => s.trim()).filter((s) => s !== '') ?? [];
      if (fields.length > 0) {
        const allowed = new Set(['id', ...fields, ...(lc.include?.split(',').map((s) => s.trim()) ?? [])]);
        for (const row of body.data) for (const k of Object.keys(row)) assert.ok(allowed.has(k), `${what}: projected row has '${k}'`);
      }
    }, tally);
  });

  it('(5) random path ids and route tails: 4xx (2xx only for reads), never 5xx', async () => {
    await property('paths', 6, pathCaseArb, 80, async (pc) => {
      const what = `${pc.method} ${pc.path} ${pc.body ?? ''}`;
      const r = await send(api, pc.method, pc.path, pc.body === undefined || pc.method === 'GET' ? {} : { body: pc.body, headers: JSON_CT });
      checkReply(r, what);
      if (r.status < 300) {
        assert.ok(pc.method === 'GET' || /\/Schema\/entities\/(validate|preview)$/.test(pc.path), `${what}: a random ${pc.method} succeeded → ${r.status} ${r.text.slice(0, 300)}`);
      }
      const segs = pc.path.split('/');
      // An entity route with a non-UUID id names no row.
      if (segs.length === 4 && (segs[1] === 'api' || segs[1] === 'v1') && segs[2] === 'customers' && !['count', 'batch'].includes(segs[3]!) && pc.method !== 'POST' && !UUID.test(segs[3]!) && segs[3] !== '') {
        // An id holding U+0000 is refused before it is looked up.
        const nul = (() => { try { return decodeURIComponent(segs[3]!).includes('\u0000'); } catch { return false; } })();
        if (nul && (pc.method === 'GET' || pc.method === 'DELETE')) expectError(r, what, 422, 'Request.NulCharacter');
        else if (pc.method === 'GET' || pc.method === 'DELETE') expectError(r, what, 404, /^(Customer\.NotFound|Route\.Unknown)$/);
      }
    }, tally);
  });

  it('(6) random If-Match, Idempotency-Key, tenant/project, Content-Type, correlation and authorization headers', async () => {
    const usedKeys = new Set<string>();
    await property('headers', 7, headerCaseArb, 110, async (hc) => {
      const n = next();
      switch (hc.kind) {
        case 'if-match': {
          const value = hc.real === 'bare' ? target.token : hc.real === 'quoted' ? `"${target.token}"` : hc.real === 'weak' ? `W/"${target.token}"` : hc.value;
          const what = `PATCH with If-Match ${describeInput(value)}`;
          const r = await send(api, 'PATCH', `/api/customers/${target.id}`, { body: JSON.stringify({ age: n % 1000 }), headers: { ...JSON_CT, 'if-match': value } });
          const t = httpTrim(value);
          const token = t.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
          if (t === '' || token === '*' || token === target.token) {
            const row = expectOk(r, what).data;
            assert.equal(row.age, n % 1000, `${what}: the update applied`);
            target.token = row.concurrencyToken;
          } else expectError(r, what, 409, 'CustomerValidation.ConcurrencyTokenMismatch');
          return;
        }
        case 'idempotency-key': {
          const body = JSON.stringify(validCustomer('idem'));
          const what = `POST with Idempotency-Key ${describeInput(hc.value)}`;
          const r = await post('/api/customers', body, { 'idempotency-key': hc.value });
          const key = httpTrim(hc.value);
          if (key !== '' && !/^[\x21-\x7e]{1,255}$/.test(key)) return void expectError(r, what, 422, 'Idempotency.InvalidKey');
          if (key !== '' && usedKeys.has(key)) return void expectError(r, what, 409, 'Idempotency.KeyReused');
          const row = created('customer', r, what);
          if (key === '') return;
          usedKeys.add(key);
          if (hc.replay) {
            const again = await post('/api/customers', body, { 'idempotency-key': hc.value });
            assert.equal(expectOk(again, `${what} (replay)`, 201).data.id, row.id, `${what}: a replay answers the first result`);
            assert.equal(again.headers.get('idempotent-replayed'), 'true', `${what}: replay is marked`);
          }
          return;
        }
        case 'x-service-tenant':
        case 'x-service-project': {
          const isTenant = hc.kind === 'x-service-tenant';
          const slug = isTenant ? scope.tenant : scope.project;
          const id = isTenant ? scope.tenantId : scope.projectId;
          const value = hc.real === 'slug' ? slug : hc.real === 'id' ? id : hc.real === 'ID' ? id.toUpperCase() : hc.value;
          const what = `GET /api/customers with ${hc.kind}: ${describeInput(value)}`;
          const r = await send(api, 'GET', '/api/customers?pageSize=1', { headers: { [hc.kind]: value } });
          const t = httpTrim(value);
          const name = isTenant ? 'Tenant' : 'Project';
          if (t === slug || t.toLowerCase() === id) expectOk(r, what);
          else if (t === '') expectError(r, what, 422, `Scope.${name}HeaderMissing`);
          else expectError(r, what, 404, `Scope.${name}NotFound`);
          return;
        }
        case 'content-type': {
          const what = `POST with Content-Type ${describeInput(hc.value)}`;
          const r = await post('/api/customers', validCustomer('ct'), { 'content-type': hc.value });
          const base = httpTrim(hc.value).split(';', 1)[0]!.trim().toLowerCase();
          if (base === 'application/json' || (base.startsWith('application/') && base.endsWith('+json'))) created('customer', r, what);
          else expectError(r, what, 415, 'Request.UnsupportedContentType');
          return;
        }
        case 'x-service-correlation-id': {
          const what = `GET a missing row with X-Service-Correlation-Id ${describeInput(hc.value)}`;
          const r = await send(api, 'GET', '/api/customers/not-a-uuid', { headers: { 'x-service-correlation-id': hc.value } });
          expectError(r, what, 404, 'Customer.NotFound');
          const t = httpTrim(hc.value);
          const cid = r.headers.get('x-service-correlation-id');
          if (/^[A-Za-z0-9._:-]{8,128}$/.test(t)) assert.equal(cid, t, `${what}: a well-formed caller id is kept`);
          else assert.ok(cid !== t && UUID.test(cid!), `${what}: a malformed caller id is replaced (${cid})`);
          return;
        }
        case 'authorization': {
          const what = `GET /api/customers with Authorization ${describeInput(hc.value.slice(0, 60))}`;
          const r = await send(api, 'GET', '/api/customers', { headers: { authorization: hc.value } });
          expectError(r, what, 401);
          return;
        }
        case 'control': {
          // uWS drops a request with a control character in a header (docs/rest-api.md); should one
          // ever get through, dispatch() answers 422 Request.NulCharacter. Never a 5xx either way.
          const what = `GET /api/customers with ${hc.header}: ${describeInput(hc.value)}`;
          const scopeHeaders = Object.entries({ ...api.headers, [hc.header]: hc.value }).map(([k, v]) => `${k}: ${v}`);
          const u = new URL(api.baseUrl);
          const line = await rawRequest(api.baseUrl, [`GET /api/customers HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n${scopeHeaders.join('\r\n')}\r\n\r\n`], 0);
          assert.ok(line === null || /^HTTP\/1\.1 4\d\d /.test(line), `${what}: ${line}`);
          expectOk(await send(api, 'GET', '/api/customers?pageSize=1'), `${what}: the server still answers`);
          return;
        }
      }
    }, tally);
  });

  // ------------------------------------------------------------ table-driven cases

  it('(7) forged cursors (a real cursor with one value or the page replaced) for every customer sort key: 200 or 422 Query.InvalidCursor', async () => {
    const real = new Map<string, { h: string; v: unknown[]; p: number }>();
    await property('forged cursors', 8, forgedCursorArb, 80, async (fcase) => {
      let cursor = real.get(fcase.sort);
      if (cursor === undefined) {
        const next = expectOk(await send(api, 'GET', `/api/customers?sort=${fcase.sort}&pageSize=1`), `first page by ${fcase.sort}`).page.next as string;
        cursor = JSON.parse(Buffer.from(next, 'base64url').toString('utf8')) as { h: string; v: unknown[]; p: number };
        real.set(fcase.sort, cursor);
      }
      const forged = fcase.at === 'page' ? { ...cursor, p: fcase.value } : { ...cursor, v: fcase.at === 0 ? [fcase.value, cursor.v[1]] : [cursor.v[0], fcase.value] };
      const path = `/api/customers?sort=${fcase.sort}&pageSize=1&cursor=${Buffer.from(JSON.stringify(forged)).toString('base64url')}`;
      const what = `cursor by ${fcase.sort} with ${fcase.at === 'page' ? 'page' : fcase.at === 0 ? 'key' : 'id'} ${describeInput(fcase.value)} (expect ${fcase.bad ? '' : '200 or '}422 Query.InvalidCursor)`;
      const r = await send(api, 'GET', path);
      if (fcase.bad || r.status !== 200) {
        const e = expectError(r, what, 422, 'Query.InvalidCursor');
        assert.equal(e.field, 'cursor', `${what}: field`);
      } else expectOk(r, what);
    }, tally);
  });

  it('(8) order filters that enter Customer, as a user holding only entity:Order:*: 403 with the missing grant, else 200 or 422 Filter.*', async () => {
    await property('filters into an unreadable entity', 9, relatedFilterArb, 60, async (rcase) => {
      const q = `filter=${encodeURIComponent(rcase.text)}`;
      const what = `filter on orders as an order-only user: ${describeInput(rcase.text)} (expect ${rcase.reaches ? '403' : '200 or 422 Filter.*'})`;
      for (const path of [`/api/orders?${q}&includeTotal=true`, `/api/orders/count?${q}`]) {
        const r = await send(orderUser, 'GET', path);
        if (rcase.unstorable) expectError(r, `${path}: ${what}`, 422, UNSTORABLE_REASON);
        else if (rcase.reaches) {
          const e = expectError(r, `${path}: ${what}`, 403, 'ExposureBinding.RequiredGrantMissing');
          assert.deepEqual(e.missingGrants, ['entity:Customer:read'], `${what}: missingGrants`);
        } else if (r.status !== 200) expectError(r, `${path}: ${what}`, 422, /^Filter\./);
      }
    }, tally);
    // include reaches Customer too; sort cannot name a column of another entity.
    expectError(await send(orderUser, 'GET', '/api/orders?include=customer'), 'include=customer as an order-only user', 403, 'ExposureBinding.RequiredGrantMissing');
    expectError(await send(orderUser, 'GET', '/api/orders?sort=customer.email'), 'sort=customer.email', 422, 'Query.UnknownSortField');
    expectOk(await send(orderUser, 'GET', '/api/orders?sort=-customer'), 'sort by the reference value');
  });

  it('malformed JSON on every write route: 422 VALIDATION_FAILED / Request.MalformedJson', async () => {
    const routes: Array<[string, string]> = [
      ['POST', '/api/customers'], ['POST', '/api/customers/batch'], ['PATCH', `/api/customers/${target.id}`], ['PUT', `/api/customers/${target.id}`],
      ['POST', '/api/orders'], ['POST', '/api/TenantRecord'], ['POST', '/api/projects/create'], ['POST', '/api/Schema/entities'], ['POST', '/v1/customers'],
    ];
    for (const [method, path] of routes) {
      for (const text of ['{"email": "x",', '{email: 1}', "{'a':1}", '[1,]', '{"a":1}}', 'tru', '{"a":"\\q"}']) {
        const what = `${method} ${path} ${text}`;
        const e = expectError(await send(api, method, path, { body: text, headers: JSON_CT }), what, 422, 'Request.MalformedJson');
        assert.equal(e.code, 'VALIDATION_FAILED');
      }
    }
  });

  it('invalid UTF-8 bodies: 422 Request.InvalidUtf8', async () => {
    const cases: Array<[string, number[]]> = [
      ['0xff 0xfe alone', [0xff, 0xfe]],
      ['0xff 0xfe inside a string', [...Buffer.from('{"email":"'), 0xff, 0xfe, ...Buffer.from('","tier":"free"}')]],
      ['overlong slash', [...Buffer.from('{"email":"'), 0xc0, 0xaf, ...Buffer.from('","tier":"free"}')]],
      ['UTF-8-encoded surrogate', [...Buffer.from('{"email":"'), 0xed, 0xa0, 0x80, ...Buffer.from('","tier":"free"}')]],
      ['truncated sequence at the end', [...Buffer.from('{"email":"x","tier":"free"}'), 0xe2, 0x82]],
      ['lone continuation byte', [0x7b, 0x80, 0x7d]],
      ['code point above U+10FFFF', [...Buffer.from('"'), 0xf4, 0x90, 0x80, 0x80, ...Buffer.from('"')]],
    ];
    for (const [name, bytes] of cases) {
      for (const path of ['/api/customers', '/api/orders/batch']) {
        expectError(await send(api, 'POST', path, { body: new Uint8Array(bytes), headers: JSON_CT }), `${name} → ${path}`, 422, 'Request.InvalidUtf8');
      }
    }
  });

  it('wrong content types: 415 Request.UnsupportedContentType; JSON types with parameters are accepted', async () => {
    const body = (): string => JSON.stringify(validCustomer('ct-table'));
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/xml', 'text/json', 'application/jsonp', 'application/octet-stream']) {
      expectError(await send(api, 'POST', '/api/customers', { body: body(), headers: { 'content-type': ct } }), `Content-Type ${ct}`, 415, 'Request.UnsupportedContentType');
    }
    expectError(await send(api, 'POST', '/api/customers', { body: 'email=a%40b&tier=free', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 'form body', 415, 'Request.UnsupportedContentType');
    // No Content-Type at all (a Uint8Array body makes fetch add none).
    expectError(await send(api, 'POST', '/api/customers', { body: new Uint8Array(Buffer.from(body())) }), 'no Content-Type', 415, 'Request.UnsupportedContentType');
    for (const ct of ['application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.plinth+json']) {
      created('customer', await send(api, 'POST', '/api/customers', { body: body(), headers: { 'content-type': ct } }), `Content-Type ${ct}`);
    }
  });

  it('deep nesting: 10,000 levels → 422 Request.TooDeep; 64 levels accepted, 65 refused', async () => {
    const deepArray = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const deepInside = `{"email":"deep@x","tier":"free","meta":${deepArray}}`;
    for (const [name, text] of [['arrays', deepArray], ['objects', deepObject], ['inside a field', deepInside], ['unterminated', '['.repeat(10_000)]] as const) {
      for (const path of ['/api/customers', '/api/customers/batch', '/api/TenantRecord']) {
        expectError(await send(api, 'POST', path, { body: text, headers: JSON_CT }), `10,000-deep ${name} → ${path}`, 422, 'Request.TooDeep');
      }
    }
    const nested = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const ok = validCustomer('depth64');
    const r = await post('/api/customers', `{"email":${JSON.stringify(ok.email)},"tier":"pro","meta":${nested(63)}}`);
    const row = created('customer', r, 'body nested 64 deep');
    assert.deepEqual(row.meta, JSON.parse(nested(63)), 'the 63-deep meta reads back');
    expectError(await post('/api/customers', `{"email":"d65@x","tier":"pro","meta":${nested(64)}}`), 'body nested 65 deep', 422, 'Request.TooDeep');
    // Filters (kept under ~60 KB of URL, see the todo below): 2,000 nested `not`s parse as JSON but exceed the
    // filter depth; 10,000 nested arrays exceed the filter text limit; 10,000 open brackets are not JSON.
    const deepFilter = `${'{"not":'.repeat(2_000)}{"age":{"eq":1}}${'}'.repeat(2_000)}`;
    expectError(await send(api, 'GET', `/api/customers?filter=${encodeURIComponent(deepFilter)}`), '2,000-deep filter', 422, 'Filter.TooDeep');
    expectError(await send(api, 'GET', `/api/customers/count?filter=${'['.repeat(10_000)}${']'.repeat(10_000)}`), '10,000-deep array filter', 422, 'Filter.TooLarge');
    expectError(await send(api, 'GET', `/api/orders?filter=${'['.repeat(10_000)}`), '10,000 open brackets as a filter', 422, 'Filter.MalformedJson');
  });

  it('oversize bodies: 10 MiB + 1 byte → 413 (Content-Length and chunked); exactly 10 MiB is read', async () => {
    const over = Buffer.alloc(10 * MiB + 1, 0x20);
    const e = expectError(await send(api, 'POST', '/api/customers', { body: over, headers: JSON_CT }), '10 MiB + 1 with Content-Length', 413, 'Request.BodyTooLarge');
    assert.equal(e.code, 'PAYLOAD_TOO_LARGE');
    expectError(await send(api, 'POST', '/api/customers/batch', { body: Buffer.alloc(64 * MiB, 0x20), headers: JSON_CT }), '64 MiB with Content-Length', 413, 'Request.BodyTooLarge');
    const headers = { ...api.headers, ...JSON_CT };
    const chunked = await postChunked(server.url, '/api/customers', headers, 10 * MiB + 1);
    expectError(chunked, `10 MiB + 1 chunked (upload ${chunked.uploadError ?? 'completed'})`, 413, 'Request.BodyTooLarge');
    const bigChunked = await postChunked(server.url, '/api/orders', headers, 40 * MiB);
    expectError(bigChunked, '40 MiB chunked', 413, 'Request.BodyTooLarge');
    // Exactly at the limit: a valid document padded with whitespace to 10 MiB.
    const exact = Buffer.alloc(10 * MiB, 0x20);
    Buffer.from(JSON.stringify(validCustomer('exactly-10MiB'))).copy(exact, 0);
    created('customer', await send(api, 'POST', '/api/customers', { body: exact, headers: JSON_CT }), 'exactly 10 MiB');
    // The server still serves the same client afterwards.
    expectOk(await send(api, 'GET', '/api/health'), 'health after oversize bodies');
  });

  // uWebSockets.js 20.30 buffers a request head that spans several TCP reads only up to 4 KiB (its fallback
  // buffer is not configurable in this build) and then closes the socket without an answer. On loopback a head
  // usually arrives in one read, so the suite passes; on real networks long filter URLs can fail this way.
  it('request heads over 4 KiB that arrive in several reads still get an answer', { todo: 'uWS 20.30 closes such connections without a response' }, async () => {
    const head = `GET /api/customers?filter=${encodeURIComponent(JSON.stringify({ email: { eq: 'x'.repeat(6_000) } }))} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminToken}\r\nX-Service-Tenant: ${scope.tenant}\r\nX-Service-Project: ${scope.project}\r\nConnection: close\r\n\r\n`;
    const status = await rawRequest(server.url, [head.slice(0, 1_000), head.slice(1_000)], 50);
    assert.ok(status !== null && /^HTTP\/1\.1 [24]\d\d /.test(status), `answer: ${status ?? '(connection closed without an answer)'}`);
  });

  it('clients that die mid-body leave the server answering', async () => {
    for (let i = 0; i < 5; i++) {
      await abortMidBody(server.url, '/api/customers', { ...api.headers, ...JSON_CT }, 1000 + i, '{"email":"half');
    }
    expectOk(await send(api, 'GET', '/api/health'), 'health after aborted uploads');
  });

  it('inputs that once produced a 5xx or a silent change (pinned, whatever the seed)', async () => {
    const f = (collection: EntityKey, filter: unknown): Promise<Reply> => send(api, 'GET', `/api/${collection}?filter=${encodeURIComponent(JSON.stringify(filter))}`);
    // Empty filter objects compiled to `()`: a SQL syntax error.
    assert.equal(expectOk(await f('customers', {}), 'filter {}').data.length > 0, true, 'filter {} matches every row');
    assert.deepEqual(expectOk(await f('customers', { not: {} }), 'filter {not:{}}').data, [], 'filter {not:{}} matches nothing');
    expectOk(await send(api, 'GET', '/api/orders/count?filter=%7B%22and%22%3A%5B%7B%7D%5D%7D'), 'count with {and:[{}]}');
    // LIKE on uuid columns: `operator does not exist: uuid ~~ unknown`.
    expectError(await f('customers', { id: { like: 'a%' } }), 'like on id', 422, 'Filter.UnsupportedOperator');
    expectError(await f('orders', { customer: { like: '%' } }), 'like on a reference', 422, 'Filter.UnsupportedOperator');
    // A pattern ending in an unfinished escape: `LIKE pattern must not end with escape character`.
    expectError(await f('customers', { email: { like: '%\\' } }), 'like ending in a backslash', 422, 'Filter.InvalidValue');
    expectOk(await f('customers', { email: { like: '%\\\\' } }), 'like ending in an escaped backslash');
    // UTC offsets of 16 h or more: `time zone displacement out of range`.
    expectError(await f('customers', { since: { gt: '2023-01-01T00:00:00+20:00' } }), 'filter with offset +20:00', 422, 'Filter.InvalidValue');
    const tz = expectError(await post('/api/customers', { ...validCustomer('tz'), since: '2023-01-01T00:00:00-16:00' }), 'create with offset -16:00', 422, 'CustomerValidation.InvalidValue');
    assert.equal(tz.field, 'since');
    created('customer', await post('/api/customers', { ...validCustomer('tz'), since: '2023-01-01T00:00:00+15:59' }), 'create with offset +15:59');
    // Instants before 1901 were refused (Date.UTC maps year 1 to 1901).
    const old = created('customer', await post('/api/customers', { ...validCustomer('old'), since: '0800-12-25T00:00:00Z' }), 'create in the year 800');
    assert.equal(old.since, '0800-12-25T00:00:00Z');
    // Lone surrogates were stored as U+FFFD: the row differed from what was accepted.
    const lone = expectError(await post('/api/customers', { email: 'lone\ud800@x', tier: 'free' }), 'lone surrogate', 422, 'Request.LoneSurrogate');
    assert.equal(lone.field, 'email');
    // Unique strings too large for their index: `index row size exceeds maximum`.
    const big = Array.from({ length: 3_000 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('');
    expectError(await post('/api/customers', { email: big, tier: 'free' }), 'email too large for its unique index', 422, 'CustomerValidation.InvalidValue');
    // A forged cursor (valid hash, value of the wrong kind for its column) reached SQL as a parameter:
    // a database error, and a 500 on PGlite for a boolean in a timestamp key. Values are now typed by their key.
    const c = JSON.parse(Buffer.from(cursors.default.text, 'base64url').toString('utf8')) as { h: string; v: unknown[]; p: number };
    for (const v of [['2023-01-01T00:00:00+20:00', c.v[1]], ['not a time', c.v[1]], [true, false], [1e308, c.v[1]], [c.v[0], 1e308]]) {
      const forged = Buffer.from(JSON.stringify({ ...c, v })).toString('base64url');
      expectError(await send(api, 'GET', `/api/customers?pageSize=1&cursor=${forged}`), `forged cursor ${JSON.stringify(v)}`, 422, 'Query.InvalidCursor');
    }
  });

  it('list limits: pageSize 201 → 422, 200 → 200; page 0 → 422', async () => {
    expectError(await send(api, 'GET', '/api/customers?pageSize=201'), 'pageSize=201', 422, 'Query.PageSizeTooLarge');
    expectError(await send(api, 'GET', '/api/orders?pageSize=100000'), 'pageSize=100000', 422, 'Query.PageSizeTooLarge');
    assert.equal(expectOk(await send(api, 'GET', '/api/customers?pageSize=200'), 'pageSize=200').page.size, 200);
    expectError(await send(api, 'GET', '/api/customers?page=0'), 'page=0', 422, 'Query.InvalidPage');
    expectError(await send(api, 'GET', '/api/customers?pageSize=-1'), 'pageSize=-1', 422, 'Query.InvalidPageSize');
  });

  it('empty and non-object bodies on create: 422', async () => {
    for (const path of ['/api/customers', '/api/orders']) {
      const entity = path.endsWith('customers') ? 'Customer' : 'Order';
      expectError(await send(api, 'POST', path, { headers: JSON_CT }), `${path} empty body`, 422, `${entity}Validation.InvalidBody`);
      expectError(await send(api, 'POST', path, {}), `${path} no body, no Content-Type`, 422, `${entity}Validation.InvalidBody`);
      for (const text of ['[]', '[{"email":"a@b","tier":"free"}]', '0', '-1.5', 'null', '"a string"', 'true', '{}']) {
        const reason = text === '{}' ? `${entity}Validation.Required` : `${entity}Validation.InvalidBody`;
        expectError(await send(api, 'POST', path, { body: text, headers: JSON_CT }), `${path} ${text}`, 422, reason);
      }
    }
    for (const text of ['[]', 'null', '5', '{}', '{"items":null}', '{"items":[]}', '{"items":{}}']) {
      expectError(await send(api, 'POST', '/api/customers/batch', { body: text, headers: JSON_CT }), `batch ${text}`, 422, /^Batch\./);
    }
  });

  it('no partial write: a batch with one bad row among good ones writes nothing', async () => {
    const before = await count('customers');
    const beforeOrders = await count('orders');
    const good = (): Record<string, unknown> => validCustomer('batch-good');
    const cases: Array<{ name: string; items: unknown[]; status: number; reason: RegExp | string; field?: string }> = [
      { name: 'a wrong type (validation)', items: [good(), good(), { ...good(), age: 'forty' }, good()], status: 422, reason: 'CustomerValidation.InvalidValue', field: 'items[2].age' },
      { name: 'an unknown field', items: [good(), { ...good(), "'; DROP TABLE x; --": 1 }], status: 422, reason: 'CustomerValidation.UnknownField' },
      { name: 'a missing required field', items: [good(), good(), { tier: 'free' }], status: 422, reason: 'CustomerValidation.Required', field: 'items[2].email' },
      { name: 'an existing email (unique index)', items: [good(), good(), { email: emails[0], tier: 'free' }], status: 409, reason: 'CustomerValidation.UniqueViolation' },
      { name: 'the same new email twice', items: (() => { const g = good(); return [good(), g, { ...g }]; })(), status: 409, reason: 'CustomerValidation.UniqueViolation' },
      { name: 'a day PostgreSQL rejects (storage)', items: [good(), { ...good(), since: '2023-02-30T00:00:00Z' }], status: 422, reason: 'CustomerValidation.InvalidValue' },
      { name: 'a non-object row', items: [good(), 'not a row', good()], status: 422, reason: 'CustomerValidation.InvalidBody' },
      { name: 'too many rows', items: Array.from({ length: 1_001 }, good), status: 422, reason: 'Batch.TooLarge' },
    ];
    for (const c of cases) {
      const e = expectError(await post('/api/customers/batch', { items: c.items }), `batch with ${c.name}`, c.status, c.reason);
      if (c.field !== undefined) assert.equal(e.field, c.field, `batch with ${c.name}: field`);
      const goodEmails = c.items.filter((x): x is { email: string } => typeof x === 'object' && x !== null && typeof (x as { email?: unknown }).email === 'string' && !emails.includes((x as { email: string }).email)).map((x) => x.email);
      for (let i = 0; i < goodEmails.length; i += 100) {
        const filter = encodeURIComponent(JSON.stringify({ email: { in: goodEmails.slice(i, i + 100) } }));
        const found = expectOk(await send(api, 'GET', `/api/customers/count?filter=${filter}`), `batch with ${c.name}: lookup`);
        assert.equal(found.data.count, 0, `batch with ${c.name}: none of its good rows was written`);
      }
    }
    const orderItems = [
      { customer: customerIds[0], total: '1.00', status: 'open' },
      { customer: customerIds[1], total: '2.00', status: 'paid' },
      { customer: '00000000-0000-4000-8000-000000000000', total: '3.00', status: 'open' },
    ];
    expectError(await post('/api/orders/batch', { items: orderItems }), 'order batch with a missing reference', 422, 'OrderValidation.ReferenceNotFound');
    assert.equal(await count('customers'), before, 'customer count unchanged by failed batches');
    assert.equal(await count('orders'), beforeOrders, 'order count unchanged by failed batches');
  });

  it('after everything: counts equal the successful creates, the server is alive, a valid create works', async () => {
    assert.ok(tally.runs >= 400, `at least 400 generated inputs ran (${tally.runs})`);
    console.log(`[bad-input ${backend}] ${tally.runs} generated inputs (seed ${SEED}); ${written.customers} customers and ${written.orders} orders created`);
    assert.equal(await count('customers'), written.customers, 'customers: only the successful creates were written');
    assert.equal(await count('orders'), written.orders, 'orders: only the successful creates were written');
    expectOk(await send(api, 'GET', '/api/health'), 'health');
    const row = created('customer', await post('/api/customers', { ...validCustomer('final'), meta: { note: "'; DROP TABLE customers; --" } }), 'final create');
    assert.equal(row.meta.note, "'; DROP TABLE customers; --");
    assert.equal(await count('customers'), written.customers, 'the final create is counted');
  });

  it('shuts down promptly: no request is left in flight by bad or aborted bodies', async () => {
    const t0 = Date.now();
    await server.stop();
    const took = Date.now() - t0;
    assert.ok(took < 5_000, `stop took ${took} ms (drain waits for requests still counted in flight)`);
  });
});

describe('bad input: seed', () => {
  it('is reported', () => {
    console.log(`[bad-input] seed ${SEED}${process.env.BAD_INPUT_SEED === undefined ? ' (default; set BAD_INPUT_SEED to change)' : ''}`);
  });
});
