/**
 * Row policy and field masks as parts of a capability grant (CONTRACT:
 * Authorization → Row policy and field masks, Claims): two users under one
 * role-wide policy each see, count, include, filter and modify only their
 * own orders, never `total`; claims-based row filters; validation at
 * creation; API keys with policy parts; POST Explainability/access.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const q = (filter: unknown): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`;
const OWN = { owner: { eq: { $actor: 'subjectId' } } };

forEachBackend('row policy and field masks', (backend) => {
  let server: TestServer;
  let admin: Client;
  let projectId: string;
  let customerId: string;
  const users: Array<{ client: Client; subjectId: string; email: string }> = [];

  const grant = (body: Json): Promise<Reply> => admin.post(`/api/projects/${projectId}/capability-grants`, body);
  const register = async (): Promise<{ client: Client; subjectId: string; email: string }> => {
    const anon = admin.with({ token: null });
    const email = `${randomUUID()}@example.com`;
    expectStatus(await anon.post('/api/identity/register', { email, password: 'long enough pw' }), 201);
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    const client = anon.with({ token: login.body.accessToken });
    const me = await client.get('/api/identity/me');
    return { client, subjectId: me.body.data.subjectId, email };
  };
  const relogin = async (email: string): Promise<Client> => {
    const anon = admin.with({ token: null });
    const login = await anon.post('/api/identity/login', { email, password: 'long enough pw' });
    expectStatus(login, 200);
    return anon.with({ token: login.body.accessToken });
  };
  const deniedByPolicy = (r: Reply, field?: string): Json => {
    const e = expectError(r, 403, 'ACCESS_DENIED', 'Access.DeniedByPolicy', field);
    assert.match(String(e.explainUrl), /\/Explainability\/access\?correlationId=/);
    assert.equal(r.body.data, undefined, 'no values in a denial');
    return e;
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken);
    admin = p.client;
    projectId = p.projectId;
    await defineEntity(admin, { entityName: 'Customer', fields: [{ name: 'name', type: 'String', nullable: false }] });
    await defineEntity(admin, {
      entityName: 'Order',
      fields: [
        { name: 'owner', type: 'ID', nullable: false },
        { name: 'total', type: 'Int', nullable: true },
        { name: 'region', type: 'String', nullable: true },
        { name: 'customer', type: 'ID', nullable: true, references: 'Customer' },
      ],
    });
    await defineEntity(admin, { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: false }, { name: 'order', type: 'ID', nullable: true, references: 'Order' }] });
    await defineEntity(admin, { entityName: 'Doc', fields: [{ name: 'region', type: 'String', nullable: false }, { name: 'body', type: 'String', nullable: true }] });
    const c = await admin.post('/api/customers', { name: 'Acme' });
    expectStatus(c, 201);
    customerId = c.body.data.id;
    for (const body of [
      { role: 'authenticated', grant: 'entity:Order:read', rowFilter: OWN, fields: ['owner', 'region', 'customer'] },
      { role: 'authenticated', grant: 'entity:Order:insert', check: OWN },
      { role: 'authenticated', grant: 'entity:Order:update', rowFilter: OWN, check: OWN, fields: ['region', 'total'] },
      { role: 'authenticated', grant: 'entity:Order:delete', rowFilter: OWN },
      { role: 'authenticated', grant: 'entity:Customer:read' },
      { role: 'authenticated', grant: 'entity:Note:read' },
      { role: 'authenticated', grant: 'entity:Doc:read', rowFilter: { region: { eq: { $actor: 'claims.region' } } } },
    ]) expectStatus(await grant(body), 201);
    users.push(await register(), await register());
  });
  after(async () => {
    await server?.close();
  });

  it('creation: the record echoes rowFilter/check/fields; identical → the same grant, a different part → a new one', async () => {
    const body = { role: 'auditor', grant: 'entity:Order:read', rowFilter: { region: { eq: 'eu' } }, fields: ['region'] };
    const a = await grant(body);
    expectStatus(a, 201);
    assert.deepEqual(a.body.data.rowFilter, body.rowFilter);
    assert.deepEqual(a.body.data.fields, body.fields);
    assert.equal(a.body.data.check, undefined);
    const again = await grant(body);
    expectStatus(again, 201);
    assert.equal(again.body.data.grantId, a.body.data.grantId);
    const other = await grant({ ...body, fields: ['region', 'owner'] });
    expectStatus(other, 201);
    assert.notEqual(other.body.data.grantId, a.body.data.grantId);
    const plain = await grant({ role: 'auditor', grant: 'entity:Order:read' });
    assert.notEqual(plain.body.data.grantId, a.body.data.grantId);
  });

  it('creation: a bad rowFilter, check or fields → 422 naming the field', async () => {
    const bad = async (extra: Json, field: RegExp): Promise<void> => {
      const r = await grant({ role: 'x', grant: 'entity:Order:read', ...extra });
      expectStatus(r, 422);
      assert.equal(r.body.error.code, 'VALIDATION_FAILED');
      assert.match(String(r.body.error.field), field);
    };
    await bad({ rowFilter: { nope: { eq: 1 } } }, /^rowFilter\.nope$/);
    await bad({ rowFilter: { owner: { near: 'x' } } }, /^rowFilter\.owner\.near$/);
    await bad({ rowFilter: { owner: { eq: { $actor: 'password' } } } }, /^rowFilter\.owner\.eq\.\$actor$/);
    await bad({ rowFilter: { owner: { eq: { $actor: 'claims.' } } } }, /^rowFilter\.owner\.eq\.\$actor$/);
    await bad({ fields: ['owner', 'nope'] }, /^fields$/);
    await bad({ rowFilter: 'owner = me' }, /^rowFilter$/);
    const r = await grant({ role: 'x', grant: 'entity:Order:insert', check: { total: { gt: 'many' } } });
    expectError(r, 422, 'VALIDATION_FAILED', 'Filter.InvalidValue', 'check.total.gt');
    // Wildcard entity grants are checked against every entity: `owner` is not a Customer field.
    const wild = await grant({ role: 'x', grant: 'entity:*:read', rowFilter: OWN });
    expectStatus(wild, 422);
    assert.match(String(wild.body.error.field), /^rowFilter\.owner$/);
  });

  it('two users each write, see, count, include and filter only their own orders, never total', async () => {
    const [a, b] = users as [typeof users[0], typeof users[0]];
    const ca = await a.client.post('/api/orders', { owner: a.subjectId, total: 10, region: 'eu', customer: customerId });
    expectStatus(ca, 201);
    assert.equal('total' in ca.body.data, false, 'a write answer is masked too');
    assert.equal(ca.body.data.region, 'eu');
    const cb = await b.client.post('/api/orders', { owner: b.subjectId, total: 20, region: 'us', customer: customerId });
    expectStatus(cb, 201);
    const aId = ca.body.data.id as string;
    const bId = cb.body.data.id as string;

    // check: inserting a row for someone else is refused, nothing written.
    deniedByPolicy(await a.client.post('/api/orders', { owner: b.subjectId, total: 1 }));
    deniedByPolicy(await a.client.post('/api/orders/batch', { items: [{ owner: a.subjectId }, { owner: b.subjectId }] }));
    assert.equal((await admin.get('/api/orders/count')).body.data.count, 2);

    const list = await a.client.get('/api/orders?includeTotal=true');
    expectStatus(list, 200);
    assert.deepEqual(list.body.data.map((r: Json) => r.id), [aId]);
    assert.equal(list.body.page.totalCount, 1);
    assert.equal('total' in list.body.data[0], false);
    assert.equal((await a.client.get('/api/orders/count')).body.data.count, 1);
    // No request filter widens the policy.
    assert.equal((await a.client.get(`/api/orders/count?${q({ owner: { eq: b.subjectId } })}`)).body.data.count, 0);
    assert.equal((await a.client.get(`/api/orders?${q({ or: [{ region: { eq: 'us' } }, { region: { eq: 'eu' } }] })}`)).body.data.length, 1);
    // fields= naming a masked field: 200, absent.
    const sparse = await a.client.get('/api/orders?fields=total,region');
    expectStatus(sparse, 200);
    assert.deepEqual(sparse.body.data, [{ id: aId, region: 'eu' }]);
    // A filter or sort on a masked field: 403.
    deniedByPolicy(await a.client.get(`/api/orders?${q({ total: { gt: 5 } })}`), 'total');
    deniedByPolicy(await a.client.get(`/api/orders/count?${q({ not: { total: { eq: 10 } } })}`), 'total');
    deniedByPolicy(await a.client.get('/api/orders?sort=-total'), 'total');

    // Read by id.
    const own = await a.client.get(`/api/orders/${aId}`);
    expectStatus(own, 200);
    assert.equal('total' in own.body.data, false);
    assert.equal(own.body.data.owner, a.subjectId);
    deniedByPolicy(await a.client.get(`/api/orders/${bId}`));
    expectStatus(await a.client.get(`/api/orders/${randomUUID()}`), 404);

    // include and the relation route leave out rows the caller may not read.
    const cust = await a.client.get(`/api/customers/${customerId}?include=orders`);
    expectStatus(cust, 200);
    assert.deepEqual(cust.body.data.orders.map((r: Json) => r.id), [aId]);
    assert.equal('total' in cust.body.data.orders[0], false);
    const rel = await b.client.get(`/api/customers/${customerId}/orders`);
    assert.deepEqual(rel.body.data.map((r: Json) => r.id), [bId]);
    const inc = await a.client.get(`/api/orders/${aId}?include=customer`);
    assert.equal(inc.body.data.customer.name, 'Acme');

    // Writes of uncovered rows: 403, nothing written.
    deniedByPolicy(await a.client.patch(`/api/orders/${bId}`, { region: 'xx' }));
    deniedByPolicy(await a.client.put(`/api/orders/${bId}`, { owner: b.subjectId, region: 'xx' }));
    deniedByPolicy(await a.client.delete(`/api/orders/${bId}`));
    deniedByPolicy(await a.client.patch('/api/orders/batch', { items: [{ id: aId, region: 'yy' }, { id: bId, region: 'xx' }] }));
    deniedByPolicy(await a.client.post('/api/orders/batch/delete', { ids: [aId, bId] }));
    const bRow = await admin.get(`/api/orders/${bId}`);
    assert.equal(bRow.body.data.region, 'us');
    assert.equal((await admin.get(`/api/orders/${aId}`)).body.data.region, 'eu');
    // A field outside the writable set: 403 naming it.
    deniedByPolicy(await a.client.patch(`/api/orders/${aId}`, { owner: b.subjectId }), 'owner');
    // Covered rows are written; the answer is masked.
    const upd = await a.client.patch(`/api/orders/${aId}`, { region: 'apac', total: 11 });
    expectStatus(upd, 200);
    assert.equal(upd.body.data.region, 'apac');
    assert.equal('total' in upd.body.data, false);
    assert.equal((await admin.get(`/api/orders/${aId}`)).body.data.total, 11);
    expectStatus(await b.client.delete(`/api/orders/${bId}`), 204);
    expectStatus(await admin.get(`/api/orders/${bId}`), 404);
    // The admin bypasses policy.
    assert.equal((await admin.get(`/api/orders/${aId}`)).body.data.owner, a.subjectId);
  });

  it('a related entity reached by a filter or include applies its own read policy and masks', async () => {
    const [a, b] = users as [typeof users[0], typeof users[0]];
    const oa = await admin.post('/api/orders', { owner: a.subjectId, total: 7, region: 'north' });
    const ob = await admin.post('/api/orders', { owner: b.subjectId, total: 8, region: 'north' });
    const na = await admin.post('/api/notes', { text: 'on a', order: oa.body.data.id });
    const nb = await admin.post('/api/notes', { text: 'on b', order: ob.body.data.id });
    expectStatus(nb, 201);
    // Note has no policy, but a filter into Order only matches Orders A may read.
    const viaOrder = await a.client.get(`/api/notes?${q({ order: { region: { eq: 'north' } } })}`);
    expectStatus(viaOrder, 200);
    assert.deepEqual(viaOrder.body.data.map((n: Json) => n.id), [na.body.data.id]);
    assert.equal((await b.client.get(`/api/notes/count?${q({ order: { owner: { eq: a.subjectId } } })}`)).body.data.count, 0);
    // A masked field through a relation: 403.
    deniedByPolicy(await a.client.get(`/api/notes?${q({ order: { total: { gt: 0 } } })}`), 'total');
    // toOne include: the unreadable Order is null; the readable one is masked.
    const inc = await a.client.get(`/api/notes?include=order&${q({ text: { like: 'on %' } })}`);
    const byText = new Map(inc.body.data.map((n: Json) => [n.text, n]));
    assert.equal((byText.get('on b') as Json).order, null);
    assert.equal((byText.get('on a') as Json).order.id, oa.body.data.id);
    assert.equal('total' in (byText.get('on a') as Json).order, false);
    // The relation route of a toOne: null for an unreadable row.
    const rel = await a.client.get(`/api/notes/${nb.body.data.id}/order`);
    expectStatus(rel, 200);
    assert.equal(rel.body.data, null);
  });

  it('claims: a rowFilter on claims.region; a token without the claim → 403 Access.DeniedByMissingClaim', async () => {
    for (const region of ['eu', 'eu', 'us']) expectStatus(await admin.post('/api/docs', { region, body: `doc ${region}` }), 201);
    const [a, b] = users as [typeof users[0], typeof users[0]];
    expectStatus(await admin.put(`/api/IdentityManagement/subjects/${a.subjectId}/claims`, { claims: { region: 'eu' } }), 200);
    const aClaims = await relogin(a.email);
    const docs = await aClaims.get('/api/docs');
    expectStatus(docs, 200);
    assert.deepEqual(docs.body.data.map((d: Json) => d.region), ['eu', 'eu']);
    assert.equal((await aClaims.get(`/api/docs/count?${q({ region: { eq: 'us' } })}`)).body.data.count, 0);
    expectError(await b.client.get('/api/docs'), 403, 'ACCESS_DENIED', 'Access.DeniedByMissingClaim');
    expectError(await b.client.get('/api/docs/count'), 403, 'ACCESS_DENIED', 'Access.DeniedByMissingClaim');
  });

  it('an API key grant with rowFilter and fields is enforced', async () => {
    expectStatus(await admin.post('/api/orders', { owner: randomUUID(), total: 5, region: 'eu' }), 201);
    expectStatus(await admin.post('/api/orders', { owner: randomUUID(), total: 6, region: 'us' }), 201);
    const bad = await admin.post(`/api/projects/${projectId}/api-keys`, { name: 'bad', grants: [{ grant: 'entity:Order:read', rowFilter: { nope: { eq: 1 } } }] });
    expectStatus(bad, 422);
    assert.match(String(bad.body.error.field), /^grants\[0\]\.rowFilter\.nope$/);
    const k = await admin.post(`/api/projects/${projectId}/api-keys`, { name: 'eu reader', grants: [{ grant: 'entity:Order:read', rowFilter: { region: { eq: 'eu' } }, fields: ['region'] }] });
    expectStatus(k, 201);
    const reveal = await admin.post(`/api/CredentialReveal/${k.body.data.revealTokenId}/reveal`, {});
    expectStatus(reveal, 200);
    const key = admin.with({ token: reveal.body.data.secret });
    const list = await key.get('/api/orders');
    expectStatus(list, 200);
    assert.ok(list.body.data.length >= 1);
    for (const r of list.body.data) {
      assert.equal(r.region, 'eu');
      assert.equal('total' in r, false);
      assert.equal('owner' in r, false);
    }
    const usId = (await admin.get(`/api/orders?${q({ region: { eq: 'us' } })}`)).body.data[0].id;
    deniedByPolicy(await key.get(`/api/orders/${usId}`));

    // An update check: the written row must satisfy it, else 403 and nothing written.
    const w = await admin.post(`/api/projects/${projectId}/api-keys`, { name: 'writer', grants: ['entity:Order:read', { grant: 'entity:Order:update', check: { region: { ne: 'forbidden' } } }] });
    const secret = (await admin.post(`/api/CredentialReveal/${w.body.data.revealTokenId}/reveal`, {})).body.data.secret as string;
    const writer = admin.with({ token: secret });
    deniedByPolicy(await writer.patch(`/api/orders/${usId}`, { region: 'forbidden' }));
    deniedByPolicy(await writer.patch('/api/orders/batch', { items: [{ id: usId, region: 'forbidden' }] }));
    assert.equal((await admin.get(`/api/orders/${usId}`)).body.data.region, 'us');
    expectStatus(await writer.patch(`/api/orders/${usId}`, { region: 'us-east' }), 200);
    assert.equal((await admin.get(`/api/orders/${usId}`)).body.data.region, 'us-east');
  });

  it('POST Explainability/access: decision, reasonCode, evaluatedFilter with $actor substituted, fieldMasks', async () => {
    const [a, b] = users as [typeof users[0], typeof users[0]];
    const r = await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'read', filter: { region: { eq: 'eu' } } });
    expectStatus(r, 200);
    assert.equal(r.body.data.decision, 'Mask');
    assert.ok(r.body.data.reasonCode.length > 0);
    assert.deepEqual(r.body.data.fieldMasks, ['total']);
    assert.deepEqual(r.body.data.evaluatedFilter, { and: [{ region: { eq: 'eu' } }, { owner: { eq: a.subjectId } }] });
    const ins = await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'insert' });
    assert.equal(ins.body.data.decision, 'Allow');
    assert.deepEqual(ins.body.data.fieldMasks, []);
    const masked = await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'read', filter: { total: { gt: 1 } } });
    assert.equal(masked.body.data.decision, 'Deny');
    assert.equal(masked.body.data.reasonCode, 'Access.DeniedByPolicy');
    const claim = await b.client.post('/api/Explainability/access', { entity: 'Doc', operation: 'read' });
    assert.equal(claim.body.data.decision, 'Deny');
    assert.equal(claim.body.data.reasonCode, 'Access.DeniedByMissingClaim');
    expectError(await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'read', asActor: { subjectId: b.subjectId } }), 403, 'ACCESS_DENIED', 'Explainability.AsActorAdminOnly');
    const as = await admin.post('/api/Explainability/access', { entity: 'Order', operation: 'delete', asActor: { subjectId: b.subjectId } });
    expectStatus(as, 200);
    assert.equal(as.body.data.decision, 'Allow');
    assert.deepEqual(as.body.data.evaluatedFilter, { owner: { eq: b.subjectId } });
    expectError(await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'fly' }), 422, 'VALIDATION_FAILED', 'Explainability.InvalidOperation', 'operation');
    // The body's contract (ExplainAccessInput) answers the reason codes and fields the handler's own checks did.
    expectError(await a.client.post('/api/Explainability/access', { entity: 'Order' }), 422, 'VALIDATION_FAILED', 'Explainability.InvalidOperation', 'operation');
    expectError(await a.client.post('/api/Explainability/access', { operation: 'read' }), 422, 'VALIDATION_FAILED', 'Explainability.EntityRequired', 'entity');
    expectError(await a.client.post('/api/Explainability/access', { entity: '', operation: 'read' }), 422, 'VALIDATION_FAILED', 'Explainability.EntityRequired', 'entity');
    expectError(await a.client.post('/api/Explainability/access', { entity: 'Order', operation: 'read', why: 1 }), 422, 'VALIDATION_FAILED', 'Explainability.UnknownProperty', 'why');
    expectError(await a.client.post('/api/Explainability/access', [1]), 422, 'VALIDATION_FAILED', 'Explainability.InvalidBody');
    expectError(await a.client.post('/api/Explainability/access', { entity: 'Nope', operation: 'read' }), 422, 'VALIDATION_FAILED', 'Explainability.UnknownEntity', 'entity');
    expectError(await admin.post('/api/Explainability/access', { entity: 'Order', operation: 'read', asActor: { subjectId: 'x' } }), 422, 'VALIDATION_FAILED', 'Explainability.InvalidActor', 'asActor.subjectId');
  });
});
