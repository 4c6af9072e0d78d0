/**
 * Evidence and usage of authored code (CONTRACT "Sandbox and limits" → Evidence; docs/authored-code.md
 * "Evidence and usage"): the audit row of an invocation and of `ctx.log` lines, read back through
 * `GET /api/audit`; the usage events `authored.invocations` and `authored.cpu_ms`; hard quotas of
 * `authored.invocations.monthly` and `authored.cpu_ms.monthly` refusing before a run. The
 * invocation itself is faked (an InvokeOutcome): the row is what is under test.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectStatus } from '../support/expect.js';
import { newSlug } from '../control/support.js';
import { recordAuthoredInvocation } from '../../runtime/authored/evidence.js';
import { admitAuthoredInvocation } from '../../runtime/authored/admission.js';
import { authoredLogTargets, MAX_LOG_LINES } from '../../runtime/authored/log.js';
import { DEFAULT_LIMITS, type HandlerDef, type InvokeOutcome } from '../../runtime/authored/types.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { OperationContext } from '../../runtime/operations/types.js';

const HANDLER: HandlerDef = {
  name: 'refund', surface: 'CoreHandler', source: 'src/refund.ts', sha256: 'a'.repeat(64), export: 'default', grants: [],
  limits: DEFAULT_LIMITS.CoreHandler, operation: { name: 'refund', input: { type: 'object' } }, bundleSha256: 'b'.repeat(64),
};
const USAGE = { cpuMs: 12.4, wallMs: 30, peakMemoryBytes: 1_048_576 };

forEachBackend('authored evidence and usage', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  const flush = async (): Promise<void> => {
    await server.node.services.audit.flush();
    await server.node.services.usage!.flush();
  };

  /** What the invocation path hands these functions: the operation's context (here one made for the project). */
  async function context(): Promise<{ ctx: OperationContext; c: Client; projectId: string }> {
    const p = await bootstrapProject(server.url, server.adminToken, newSlug());
    const ctx = {
      inv: { correlationId: randomUUID(), body: null, protocol: 'rest' },
      services: server.node.services,
      actor: { kind: 'admin', label: 'platform-admin', subjectId: null, projectId: null, sessionId: null, roles: [] },
      scope: { tenant: { id: p.tenantId }, project: { id: p.projectId }, branch: 'main' },
      operationId: 'Operation.refund', entity: null, entityOperation: null,
    } as unknown as OperationContext;
    return { ctx, c: p.client, projectId: p.projectId };
  }

  const auditOf = async (c: Client, filter: object): Promise<any[]> => {
    const r = await c.get(`/api/audit?pageSize=200&filter=${encodeURIComponent(JSON.stringify(filter))}`);
    expectStatus(r, 200);
    return r.body.data;
  };

  it('one audit row per invocation: stage authored, handler, sha256, outcome, cpuMs, wallMs, peak memory; GET /api/audit filters by stage', async () => {
    const { ctx, c } = await context();
    recordAuthoredInvocation(ctx, HANDLER, { ok: true, value: { refunded: true }, usage: USAGE });
    await flush();
    const rows = await auditOf(c, { stage: 'authored' });
    assert.equal(rows.length, 1);
    const { at, ...row } = rows[0];
    assert.ok(!Number.isNaN(Date.parse(at)));
    assert.deepEqual(row, {
      correlationId: ctx.inv.correlationId, actor: 'platform-admin', operationId: 'Operation.refund', decision: 'Allow', reasonCode: 'Handler.Completed', status: 200,
      stage: 'authored', handler: 'refund', sha256: HANDLER.sha256, outcome: 'ok', cpuMs: 12.4, wallMs: 30, peakMemoryBytes: 1_048_576,
    });
    assert.equal((await auditOf(c, { correlationId: ctx.inv.correlationId, stage: 'authored' })).length, 1);
    const bad = await c.get(`/api/audit?filter=${encodeURIComponent(JSON.stringify({ stage: 'nope' }))}`);
    expectStatus(bad, 422);
  });

  it('a thrown error keeps its stack on the row (never in an answer); limits and canonical errors read as the contract answers them', async () => {
    const { ctx, c } = await context();
    const threw: InvokeOutcome = { ok: false, failure: { kind: 'threw', message: 'boom', stack: 'Error: boom\n    at refund (src/refund.ts:3:9)' }, usage: USAGE };
    recordAuthoredInvocation(ctx, HANDLER, threw);
    recordAuthoredInvocation(ctx, HANDLER, { ok: false, failure: { kind: 'cpuLimit' }, usage: USAGE });
    recordAuthoredInvocation(ctx, HANDLER, { ok: false, failure: { kind: 'memoryLimit' }, usage: USAGE });
    recordAuthoredInvocation(ctx, HANDLER, { ok: false, failure: { kind: 'canonical', error: { code: 'NOT_FOUND', reasonCode: 'Order.Missing', message: 'no', status: 404 } }, usage: USAGE });
    recordAuthoredInvocation(ctx, HANDLER, { ok: false, failure: { kind: 'wallClockLimit' }, usage: USAGE }, 'given stack');
    await flush();
    const rows = await auditOf(c, { stage: 'authored' });
    assert.deepEqual(rows.map((r) => [r.outcome, r.decision, r.reasonCode, r.status]), [
      ['threw', 'Error', 'Handler.Threw', 502], ['cpuLimit', 'Error', 'Handler.CpuLimit', 504], ['memoryLimit', 'Error', 'Handler.MemoryLimit', 502],
      ['canonical', 'Allow', 'Order.Missing', 404], ['wallClockLimit', 'Error', 'Handler.WallClockLimit', 504],
    ]);
    assert.equal(rows[0].stack, 'Error: boom\n    at refund (src/refund.ts:3:9)');
    assert.equal(rows[1].stack, undefined);
    assert.equal(rows[4].stack, 'given stack');
  });

  it('ctx.log lines are audit rows of the invocation\'s correlation id; past the cap one row says so and the rest are dropped', async () => {
    const { ctx, c } = await context();
    const log = authoredLogTargets(ctx, HANDLER);
    assert.deepEqual(await log['log.info']({ target: 'log.info', args: ['refund started', { orderId: 'o1' }] }), { ok: true, value: null });
    await log['log.warn']({ target: 'log.warn', args: ['x'.repeat(5_000)] });
    await log['log.error']({ target: 'log.error', args: [{ not: 'a string' }, 42] });
    for (let i = 3; i < MAX_LOG_LINES + 20; i++) await log['log.info']({ target: 'log.info', args: [`line ${i}`] });
    await flush();
    const rows = await auditOf(c, { correlationId: ctx.inv.correlationId, stage: 'authored' });
    assert.equal(rows.length, MAX_LOG_LINES + 1);
    assert.deepEqual([rows[0].level, rows[0].message, rows[0].fields, rows[0].reasonCode, rows[0].handler], ['info', 'refund started', { orderId: 'o1' }, 'Handler.Log', 'refund']);
    assert.equal(rows[1].message.length, 2_049, 'cut to 2,048 characters and an ellipsis');
    assert.deepEqual([rows[2].level, rows[2].message, rows[2].fields], ['error', '{"not":"a string"}', { value: 42 }]);
    assert.match(rows[MAX_LOG_LINES].message, /rest are dropped/);
  });

  it('usage: authored.invocations 1 per run and authored.cpu_ms its CPU milliseconds, in GET /api/usage/events', async () => {
    const { ctx, c } = await context();
    recordAuthoredInvocation(ctx, HANDLER, { ok: true, value: null, usage: USAGE });
    recordAuthoredInvocation(ctx, HANDLER, { ok: false, failure: { kind: 'cpuLimit' }, usage: { ...USAGE, cpuMs: 0.2 } });
    await flush();
    const events = async (kind: string): Promise<any[]> => {
      const r = await c.get(`/api/usage/events?kind=${kind}`);
      expectStatus(r, 200);
      return r.body.data;
    };
    const runs = await events('authored.invocations');
    assert.deepEqual(runs.map((e) => [e.quantity, e.operationId, e.correlationId, e.dimensions]), [[1, 'Operation.refund', ctx.inv.correlationId, { handler: 'refund' }], [1, 'Operation.refund', ctx.inv.correlationId, { handler: 'refund' }]]);
    assert.deepEqual((await events('authored.cpu_ms')).map((e) => e.quantity), [13, 1], 'whole milliseconds, rounded up, at least 1');
  });

  it('a hard authored.invocations.monthly quota refuses the run past it with 429 and the quota headers, before it runs', async () => {
    const { ctx, c, projectId } = await context();
    expectStatus(await c.post(`/api/Usage/${projectId}/quotas`, { kind: 'authored.invocations.monthly', limit: 2, mode: 'hard' }), 201);
    for (let i = 0; i < 2; i++) {
      const a = await admitAuthoredInvocation(ctx);
      a.settle(USAGE);
      recordAuthoredInvocation(ctx, HANDLER, { ok: true, value: null, usage: USAGE });
    }
    const refused = await admitAuthoredInvocation(ctx).then(() => null, (err: unknown) => err);
    assert.ok(ServiceError.is(refused), String(refused));
    assert.deepEqual([refused.code, refused.reasonCode], ['QUOTA_EXCEEDED', 'Quota.AuthoredInvocationsMonthly.Exhausted']);
    assert.equal(refused.details.headers?.['X-Service-Quota-Kind'], 'authored.invocations.monthly');
    assert.equal(refused.details.headers?.['X-Service-Quota-Used'], '2');
    const summary = await c.get(`/api/Usage/${projectId}/summary`);
    expectStatus(summary, 200);
    assert.equal(summary.body.data.find((q: any) => q.kind === 'authored.invocations.monthly')?.used, 2);
  });

  it('a quota created after usage counts the usage already recorded (its counter loads authored.invocations for authored.invocations.monthly)', async () => {
    const { ctx, c, projectId } = await context();
    recordAuthoredInvocation(ctx, HANDLER, { ok: true, value: null, usage: USAGE });
    recordAuthoredInvocation(ctx, HANDLER, { ok: true, value: null, usage: USAGE });
    await flush();
    expectStatus(await c.post(`/api/Usage/${projectId}/quotas`, { kind: 'authored.invocations.monthly', limit: 2, mode: 'hard' }), 201);
    expectStatus(await c.post(`/api/Usage/${projectId}/quotas`, { kind: 'authored.cpu_ms.monthly', limit: 1_000, mode: 'monitor' }), 201);
    const summary = await c.get(`/api/Usage/${projectId}/summary`);
    expectStatus(summary, 200);
    assert.deepEqual(summary.body.data.map((q: any) => [q.kind, q.used]), [['authored.invocations.monthly', 2], ['authored.cpu_ms.monthly', 26]]);
    const refused = await admitAuthoredInvocation(ctx).then(() => null, (err: unknown) => err);
    assert.ok(ServiceError.is(refused) && refused.code === 'QUOTA_EXCEEDED', String(refused));
  });

  it('a hard authored.cpu_ms.monthly quota admits while a millisecond is left and counts the real milliseconds; a released admission counts nothing', async () => {
    const { ctx, c, projectId } = await context();
    expectStatus(await c.post(`/api/Usage/${projectId}/quotas`, { kind: 'authored.cpu_ms.monthly', limit: 20, mode: 'hard' }), 201);
    (await admitAuthoredInvocation(ctx)).release();
    (await admitAuthoredInvocation(ctx)).settle({ ...USAGE, cpuMs: 19.2 });
    const refused = await admitAuthoredInvocation(ctx).then(() => null, (err: unknown) => err);
    assert.ok(ServiceError.is(refused), String(refused));
    assert.deepEqual([refused.code, refused.reasonCode, refused.details.headers?.['X-Service-Quota-Used']], ['QUOTA_EXCEEDED', 'Quota.AuthoredCpuMsMonthly.Exhausted', '20']);
  });
});
