/**
 * Governance envelopes cap the quotas a child project may set (envelope
 * `maxQuotas`, docs/usage.md "Governance caps"): a quota past the cap is
 * refused at write time, the cap holds as a hard quota where the project has
 * none, caps merge to the smallest down the ancestry, and a change applies
 * from the next request. Real node, both backends.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, defineEntity } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

const nextMonthStart = (): string => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
};

forEachBackend('governance quota caps', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => { await server?.close(); });

  async function family(): Promise<{ parentId: string; childId: string; child: Client }> {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await admin.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const parent = await admin.post('/api/projects/create', { tenant, slug: 'parent', name: 'Parent' });
    expectStatus(parent, 201);
    const child = await admin.post(`/api/projects/${parent.body.data.id}/children`, { slug: 'child', name: 'Child' });
    expectStatus(child, 201);
    const scoped = admin.with({ tenant, project: 'child' });
    await defineEntity(scoped, { entityName: 'Note', fields: [{ name: 'title', type: 'String', nullable: true }] });
    return { parentId: parent.body.data.id, childId: child.body.data.id, child: scoped };
  }

  const setEnvelope = async (projectId: string, envelope: Record<string, unknown>): Promise<void> => {
    expectStatus(await admin.put(`/api/projects/${projectId}/governance/inheritance-policy`, { envelope }), 200);
  };

  it('refuses a child quota past the cap (POST, PUT, PATCH) with 422 Governance.EnvelopeExceeded and writes nothing', async () => {
    const f = await family();
    await setEnvelope(f.parentId, { maxQuotas: { 'write.monthly': 3 } });
    expectError(await admin.post(`/api/Usage/${f.childId}/quotas`, { kind: 'write.monthly', limit: 5, mode: 'hard' }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'limit');
    const ok = await admin.post(`/api/Usage/${f.childId}/quotas`, { kind: 'write.monthly', limit: 2, mode: 'soft' });
    expectStatus(ok, 201);
    const id = ok.body.data.id as string;
    expectError(await f.child.patch(`/api/usage/quotas/${id}`, { limit: 4 }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'limit');
    expectError(await admin.put(`/api/Usage/${f.childId}/quotas/${id}`, { kind: 'write.monthly', limit: 9, mode: 'soft' }), 422, 'VALIDATION_FAILED', 'Governance.EnvelopeExceeded', 'limit');
    const listed = await admin.get(`/api/Usage/${f.childId}/quotas`);
    assert.deepEqual(listed.body.data.map((q: { limit: number }) => q.limit), [2], 'nothing written by the refused writes');
    // Other kinds are not capped.
    expectStatus(await admin.post(`/api/Usage/${f.childId}/quotas`, { kind: 'read.monthly', limit: 1_000_000, mode: 'hard' }), 201);
  });

  it('holds the cap as a hard quota where the child sets none (429 with the quota headers), and a soft quota does not lift it', async () => {
    const f = await family();
    await setEnvelope(f.parentId, { maxQuotas: { 'write.monthly': 3 } });
    expectStatus(await admin.post(`/api/Usage/${f.childId}/quotas`, { kind: 'write.monthly', limit: 1, mode: 'soft' }), 201);
    for (let i = 0; i < 3; i++) expectStatus(await f.child.post('/api/notes', { title: `n${i}` }), 201);
    const refused = await f.child.post('/api/notes', { title: 'over' });
    const e = expectError(refused, 429, 'QUOTA_EXCEEDED', 'Quota.WriteMonthly.Exhausted');
    assert.equal((e as { retryable?: boolean }).retryable, false);
    assert.equal(refused.headers.get('x-service-quota-kind'), 'write.monthly');
    assert.equal(refused.headers.get('x-service-quota-limit'), '3');
    assert.equal(refused.headers.get('x-service-quota-used'), '3');
    assert.equal(refused.headers.get('x-service-quota-reset'), nextMonthStart());
    const listed = await f.child.get('/api/notes?pageSize=50');
    assert.equal(listed.body.data.length, 3, 'the refused write left no row');
    const summary = await admin.get(`/api/Usage/${f.childId}/summary`);
    expectStatus(summary, 200);
    const cap = summary.body.data.find((r: { quotaId: string }) => r.quotaId === 'governance:write.monthly');
    assert.deepEqual(cap, { quotaId: 'governance:write.monthly', kind: 'write.monthly', mode: 'hard', limit: 3, used: 3 });
  });

  it('merges caps to the smallest down the ancestry, and a change applies from the next request', async () => {
    const f = await family();
    await setEnvelope(f.parentId, { maxQuotas: { 'write.monthly': 10, 'read.monthly': 100 } });
    await setEnvelope(f.childId, { maxQuotas: { 'write.monthly': 2 } });
    const env = await admin.get(`/api/projects/${f.childId}/governance/envelope`);
    expectStatus(env, 200);
    assert.deepEqual(env.body.data.effective.maxQuotas, { 'write.monthly': 2, 'read.monthly': 100 });
    assert.equal(env.body.data.chain.length, 2);
    for (let i = 0; i < 2; i++) expectStatus(await f.child.post('/api/notes', { title: `n${i}` }), 201);
    expectError(await f.child.post('/api/notes', { title: 'over' }), 429, 'QUOTA_EXCEEDED', 'Quota.WriteMonthly.Exhausted');
    // The child's own tighter cap goes: the parent's 10 applies from the next request.
    await setEnvelope(f.childId, {});
    expectStatus(await f.child.post('/api/notes', { title: 'again' }), 201);
    // The parent lowers its cap below what was used: refused again at once.
    await setEnvelope(f.parentId, { maxQuotas: { 'write.monthly': 1 } });
    expectError(await f.child.post('/api/notes', { title: 'over2' }), 429, 'QUOTA_EXCEEDED', 'Quota.WriteMonthly.Exhausted');
  });

  it('refuses a bad maxQuotas with 422 naming the field', async () => {
    const f = await family();
    const put = (envelope: unknown) => admin.put(`/api/projects/${f.parentId}/governance/inheritance-policy`, { envelope });
    expectError(await put({ maxQuotas: { 'nope.monthly': 1 } }), 422, 'VALIDATION_FAILED', 'Governance.UnknownQuotaKind', 'envelope.maxQuotas.nope.monthly');
    expectError(await put({ maxQuotas: { 'read.monthly': -1 } }), 422, 'VALIDATION_FAILED', 'Governance.InvalidQuotaCap', 'envelope.maxQuotas.read.monthly');
    expectError(await put({ maxQuotas: { 'read.monthly': 1.5 } }), 422, 'VALIDATION_FAILED', 'Governance.InvalidQuotaCap', 'envelope.maxQuotas.read.monthly');
    expectError(await put({ maxQuotas: [1] }), 422, 'VALIDATION_FAILED', 'Governance.InvalidEnvelope', 'envelope.maxQuotas');
  });
});
