import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bootstrapProject, defineEntity, errorOf, type Client } from '../support/client.js';
import { forEachBackend, startServer, type TestServer } from '../support/server.js';

interface AuditRow { actor: string; operation_id: string; decision: string; reason_code: string; status: number; project_id: string | null }

forEachBackend('dispatch pipeline', (backend) => {
  let server: TestServer;
  let api: Client;
  let projectId: string;

  before(async () => {
    server = await startServer({ backend });
    ({ client: api, projectId } = await bootstrapProject(server.url, server.adminToken));
    await defineEntity(api, { entityName: 'Doc', fields: [{ name: 'title', type: 'String', nullable: false }] });
  });
  after(() => server.close());

  /** Audit rows of one correlation id, after the buffered writer flushed. */
  async function auditOf(correlationId: string): Promise<AuditRow[]> {
    const services = server.node.services;
    await services.audit.flush();
    const res = await services.db.query<AuditRow>('SELECT actor, operation_id, decision, reason_code, status, project_id FROM plinth.audit WHERE correlation_id = $1', [correlationId]);
    return res.rows;
  }

  it('writes one Allow row per successful call, with the concrete operation id', async () => {
    const r = await api.post('/api/docs', { title: 'a' });
    assert.equal(r.status, 201);
    const rows = await auditOf(r.headers.get('x-service-correlation-id')!);
    assert.deepEqual(rows, [{ actor: 'platform-admin', operation_id: 'Entity.Doc.Create', decision: 'Allow', reason_code: 'Access.Allowed', status: 201, project_id: projectId }]);
  });

  it('writes a Deny row for an authentication failure (stage 1)', async () => {
    const r = await api.with({ token: 'bogus-token' }).get('/api/docs');
    assert.equal(r.status, 401);
    const rows = await auditOf(errorOf(r).correlationId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.decision, 'Deny');
    assert.equal(rows[0]!.reason_code, 'Auth.InvalidToken');
    assert.equal(rows[0]!.status, 401);
  });

  it('writes a Deny row with the binding for a missing grant (stage 4)', async () => {
    const anon = api.with({ token: null });
    await anon.post('/api/identity/register', { email: 'p@example.com', password: 'long enough pw' });
    const login = await anon.post('/api/identity/login', { email: 'p@example.com', password: 'long enough pw' });
    assert.equal(login.status, 200, login.text);
    const user = api.with({ token: login.body.accessToken });
    const r = await user.get('/api/docs');
    assert.equal(r.status, 403);
    const e = errorOf(r);
    assert.equal(e.code, 'ACCESS_DENIED');
    assert.equal(e.reasonCode, 'ExposureBinding.RequiredGrantMissing');
    assert.deepEqual(e.missingGrants, ['entity:Doc:read']);
    assert.equal((r.body.error as { bindingId: string }).bindingId, 'rest:Entity.Doc.List');
    const rows = await auditOf(e.correlationId);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.operation_id, 'Entity.Doc.List');
    assert.equal(rows[0]!.decision, 'Deny');
    assert.match(rows[0]!.actor, /^user:[0-9a-f-]{36}$/);
  });

  it('records a declared failure after authorization as Allow with its reason code', async () => {
    const r = await api.get('/api/docs/00000000-0000-4000-8000-000000000000');
    assert.equal(r.status, 404);
    const rows = await auditOf(errorOf(r).correlationId);
    assert.deepEqual(rows.map((x) => [x.decision, x.reason_code, x.status]), [['Allow', 'Doc.NotFound', 404]]);
  });

  it('keeps a well-formed caller correlation id and uses it in the audit trail', async () => {
    const id = `trace-${Date.now()}-abcdef`;
    const r = await api.get('/api/docs', { 'x-service-correlation-id': id });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-service-correlation-id'), id);
    assert.equal(r.body.meta.correlationId, id);
    assert.equal((await auditOf(id)).length, 1);
  });
});
