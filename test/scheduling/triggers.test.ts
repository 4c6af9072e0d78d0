/**
 * CONTRACT "Scheduling", Triggers: `POST|GET /api/scheduling/taskdefinition/{id}/triggers`,
 * `DELETE …/triggers/{triggerId}` over real HTTP: each kind's record and first fire, the stored
 * entity / receiver columns, every 422 with its reason code and field, the per-definition bound.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { expectError, expectStatus } from '../support/expect.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { controlData } from '../control/support.js';
import { PLATFORM_SCHEMA } from '../../storage/index.js';
import { addTrigger, createDefinition, DEFINITIONS, publishJob } from './support.js';

const JOB = 'export default async () => null;';
const COMMON = ['createdAt', 'definitionId', 'id', 'kind', 'misfire', 'nextFireAt'];
const keys = (t: Record<string, unknown>): string[] => Object.keys(t).sort();

forEachBackend('scheduling: triggers', (backend: Backend) => {
  let server: TestServer;
  let c: Client;
  let def: any;
  let receiverId: string;
  const triggers = (id = def.id): string => `${DEFINITIONS}/${id}/triggers`;
  before(async () => {
    server = await startServer({ backend });
    c = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(c, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: true }, { name: 'total', type: 'Int', nullable: true }] });
    await publishJob(c, 'tick', JOB);
    def = await createDefinition(c, { name: 'ticker', handler: 'tick' });
    const r = await c.post('/api/webhooks/receivers', { name: 'payments', signingSecret: 'a-long-enough-signing-secret' });
    expectStatus(r, 201);
    receiverId = r.body.data.id;
  });
  after(async () => {
    await server?.close();
  });

  it('cron: default zone UTC, the first fire after now; 6 fields with seconds too', async () => {
    const before = Date.now();
    const t = await addTrigger(c, def.id, { kind: 'cron', cron: '0 3 * * *' });
    assert.deepEqual(keys(t), [...COMMON, 'cron', 'timezone'].sort());
    assert.equal(t.definitionId, def.id);
    assert.equal(t.timezone, 'UTC');
    assert.equal(t.misfire, 'fireOnce');
    const next = new Date(t.nextFireAt);
    assert.equal(next.getUTCHours(), 3);
    assert.equal(next.getUTCMinutes(), 0);
    assert.ok(next.getTime() > before && next.getTime() <= before + 86_400_000);
    const s = await addTrigger(c, def.id, { kind: 'cron', cron: '*/10 * * * * *', timezone: 'Europe/Berlin', misfire: 'skip' });
    assert.equal(s.misfire, 'skip');
    assert.equal(s.timezone, 'Europe/Berlin');
    const ms = Date.parse(s.nextFireAt) - Date.now();
    assert.ok(ms > -1_000 && ms <= 10_000, `a */10-second cron fires within 10 s, not ${ms} ms`);
  });

  it('interval fires first after its period; once at its time, a past one too', async () => {
    const before = Date.now();
    const i = await addTrigger(c, def.id, { kind: 'interval', intervalSeconds: 90 });
    assert.deepEqual(keys(i), [...COMMON, 'intervalSeconds'].sort());
    const delta = Date.parse(i.nextFireAt) - before;
    assert.ok(delta >= 89_000 && delta <= 95_000, `next fire ${delta} ms after creation`);
    const at = '2030-01-02T03:04:05.000Z';
    const o = await addTrigger(c, def.id, { kind: 'once', at });
    assert.deepEqual(keys(o), [...COMMON, 'at'].sort());
    assert.equal(o.at, at);
    assert.equal(o.nextFireAt, at);
    const past = await addTrigger(c, def.id, { kind: 'once', at: '2020-01-01T00:00:00+02:00' });
    assert.equal(past.nextFireAt, '2019-12-31T22:00:00.000Z', 'a past time is due at once');
  });

  it('event: kinds default to all three, a filter is kept; the entity column is stored', async () => {
    const e = await addTrigger(c, def.id, { kind: 'event', entity: 'Order' });
    assert.deepEqual(keys(e), [...COMMON, 'entity', 'kinds'].sort());
    assert.deepEqual(e.kinds, ['created', 'updated', 'deleted']);
    assert.equal(e.nextFireAt, null);
    const filter = { status: { eq: 'paid' }, total: { gt: 10 } };
    const f = await addTrigger(c, def.id, { kind: 'event', entity: 'Order', kinds: ['created'], filter });
    assert.deepEqual(f.filter, filter);
    assert.deepEqual(f.kinds, ['created']);
    const row = (await server.node.services.db.query<{ entity: string; receiver_id: string | null }>(
      `SELECT entity, receiver_id FROM ${PLATFORM_SCHEMA}.task_triggers WHERE id = $1`, [f.id])).rows[0]!;
    assert.deepEqual({ ...row }, { entity: 'Order', receiver_id: null });
  });

  it('webhook: an inbound receiver of the project; the receiver column is stored', async () => {
    const w = await addTrigger(c, def.id, { kind: 'webhook', receiverId, misfire: 'skip' });
    assert.deepEqual(keys(w), [...COMMON, 'receiverId'].sort());
    assert.equal(w.receiverId, receiverId);
    assert.equal(w.nextFireAt, null);
    const row = (await server.node.services.db.query<{ entity: string | null; receiver_id: string }>(
      `SELECT entity, receiver_id FROM ${PLATFORM_SCHEMA}.task_triggers WHERE id = $1`, [w.id])).rows[0]!;
    assert.deepEqual({ ...row }, { entity: null, receiver_id: receiverId });
  });

  it('refuses every bad trigger with 422 VALIDATION_FAILED, its reason code and field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{}, 'Trigger.InvalidKind', 'kind'],
      [{ kind: 'hourly' }, 'Trigger.InvalidKind', 'kind'],
      [{ kind: 'cron', cron: 'not a cron' }, 'Trigger.InvalidCron', 'cron'],
      [{ kind: 'cron', cron: '61 * * * *' }, 'Trigger.InvalidCron', 'cron'],
      [{ kind: 'cron', cron: '* * *' }, 'Trigger.InvalidCron', 'cron'],
      [{ kind: 'cron' }, 'Trigger.InvalidCron', 'cron'],
      [{ kind: 'cron', cron: '0 3 * * *', timezone: 'Mars/Olympus' }, 'Trigger.InvalidTimeZone', 'timezone'],
      [{ kind: 'interval', intervalSeconds: 0 }, 'Trigger.InvalidInterval', 'intervalSeconds'],
      [{ kind: 'interval', intervalSeconds: 1.5 }, 'Trigger.InvalidInterval', 'intervalSeconds'],
      [{ kind: 'interval', intervalSeconds: '60' }, 'Trigger.InvalidInterval', 'intervalSeconds'],
      [{ kind: 'interval' }, 'Trigger.InvalidInterval', 'intervalSeconds'],
      [{ kind: 'interval', intervalSeconds: 60, cron: '* * * * *' }, 'Trigger.UnknownProperty', 'cron'],
      [{ kind: 'interval', intervalSeconds: 60, misfire: 'later' }, 'Trigger.InvalidMisfire', 'misfire'],
      [{ kind: 'once', at: 'tomorrow' }, 'Trigger.InvalidAt', 'at'],
      [{ kind: 'once', at: '2030-02-30T00:00:00Z' }, 'Trigger.InvalidAt', 'at'],
      [{ kind: 'event', entity: 'Nothing' }, 'Trigger.UnknownEntity', 'entity'],
      [{ kind: 'event' }, 'Trigger.UnknownEntity', 'entity'],
      [{ kind: 'event', entity: 'Order', kinds: [] }, 'Trigger.InvalidKinds', 'kinds'],
      [{ kind: 'event', entity: 'Order', kinds: ['archived'] }, 'Trigger.InvalidKinds', 'kinds[0]'],
      [{ kind: 'event', entity: 'Order', filter: { nope: { eq: 1 } } }, 'Filter.UnknownField', 'filter.nope'],
      [{ kind: 'event', entity: 'Order', filter: { status: { near: 'x' } } }, 'Filter.UnknownOperator', 'filter.status.near'],
      [{ kind: 'event', entity: 'Order', receiverId }, 'Trigger.UnknownProperty', 'receiverId'],
      [{ kind: 'webhook', receiverId: randomUUID() }, 'Trigger.UnknownReceiver', 'receiverId'],
      [{ kind: 'webhook', receiverId: 'whr_x' }, 'Trigger.UnknownReceiver', 'receiverId'],
      [{ kind: 'webhook' }, 'Trigger.UnknownReceiver', 'receiverId'],
      [{ kind: 'once', at: '2030-01-01T00:00:00Z', extra: 1 }, 'Trigger.UnknownProperty', 'extra'],
    ];
    const failures: string[] = [];
    for (const [body, reason, field] of cases) {
      const r = await c.post(triggers(), body);
      const e = r.body?.error;
      if (r.status !== 422 || e?.code !== 'VALIDATION_FAILED' || e.reasonCode !== reason || e.field !== field) {
        failures.push(`${JSON.stringify(body)} → ${r.status} ${e?.reasonCode} ${e?.field} (wanted ${reason} ${field})`);
      }
    }
    assert.deepEqual(failures, []);
  });

  it('lists a definition\'s triggers oldest first; delete removes one (then 404)', async () => {
    const d = await createDefinition(c, { name: 'lister', handler: 'tick' });
    const a = await addTrigger(c, d.id, { kind: 'interval', intervalSeconds: 5 });
    const b = await addTrigger(c, d.id, { kind: 'event', entity: 'Order', kinds: ['deleted'] });
    const listed = controlData(await c.get(triggers(d.id)), 200, 'TaskTrigger', 'listed');
    assert.deepEqual(listed, [a, b]);
    expectStatus(await c.delete(`${triggers(d.id)}/${a.id}`), 204);
    assert.deepEqual(controlData(await c.get(triggers(d.id)), 200), [b]);
    expectError(await c.delete(`${triggers(d.id)}/${a.id}`), 404, 'NOT_FOUND', 'Trigger.NotFound');
    expectError(await c.delete(`${triggers(d.id)}/not-a-uuid`), 404, 'NOT_FOUND', 'Trigger.NotFound');
    // A trigger is deleted only through its own definition.
    expectError(await c.delete(`${triggers()}/${b.id}`), 404, 'NOT_FOUND', 'Trigger.NotFound');
    // Deleting the definition deletes its triggers.
    expectStatus(await c.delete(`${DEFINITIONS}/${d.id}`), 204);
    const left = await server.node.services.db.query(`SELECT 1 FROM ${PLATFORM_SCHEMA}.task_triggers WHERE definition_id = $1`, [d.id]);
    assert.equal(left.rows.length, 0);
  });

  it(`a definition holds at most 32 triggers (then 422 Trigger.TooMany)`, async () => {
    const d = await createDefinition(c, { name: 'crowded', handler: 'tick' });
    for (let i = 0; i < 32; i++) await addTrigger(c, d.id, { kind: 'interval', intervalSeconds: 60 + i });
    expectError(await c.post(triggers(d.id), { kind: 'interval', intervalSeconds: 60 }), 422, 'VALIDATION_FAILED', 'Trigger.TooMany');
    assert.equal(controlData(await c.get(triggers(d.id)), 200).length, 32);
  });
});
