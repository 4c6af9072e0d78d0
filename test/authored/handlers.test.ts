/**
 * Handlers as part of the publication (CONTRACT "Authored code" → "Handlers", "Operations",
 * "Sandbox and limits"): declaration compiles the branch's source assets and publishes one
 * publication and one journal entry; compile problems are 422s with their place; a PUT
 * re-pins; DELETE drops; the journal, rollback, proposals and deployments carry handlers.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, untilDeployment } from '../control/support.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const HELPER = 'export function double(n: number): number {\n  return n * 2;\n}\n';
const MAIN = "import { double } from './lib/math';\n\nexport default async function (ctx: unknown, input: { n: number }) {\n  return { out: double(input.n) };\n}\n";
const RECORD_KEYS = ['export', 'grants', 'limits', 'name', 'publicationVersion', 'sha256', 'source', 'surface'];
const ORDER = { entityName: 'Order', fields: [{ name: 'total', type: 'Int', nullable: true }] };

forEachBackend('handlers: declaration and publication', (backend: Backend) => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  const file = async (c: Client, path: string, content: string): Promise<any> => controlData(await c.post('/api/SourceAsset/file', { path, content }), 201);
  const head = async (c: Client, branch = 'main'): Promise<number> => controlData(await c.get(`/api/branches/${branch}`), 200).head.publicationVersion;
  const journal = async (c: Client): Promise<any[]> => controlData(await c.get('/api/Schema/journal'), 200, 'SchemaJournal', 'listed');

  /** A project whose main has Order and the two source files. */
  async function project(): Promise<Client> {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    await defineEntity(c, ORDER);
    await file(c, 'src/lib/math.ts', HELPER);
    await file(c, 'src/main.ts', MAIN);
    return c;
  }

  it('POST with a .ts source importing a relative .ts helper → 201 record; one publication, one journal entry; GET list and by name', async () => {
    const c = await project();
    const before = await head(c);
    const rec = controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts', grants: ['entity:Order:read'] }), 201, 'Handler', 'created');
    assert.deepEqual(Object.keys(rec).sort(), RECORD_KEYS);
    assert.equal(rec.sha256, sha(MAIN));
    assert.equal(rec.export, 'default');
    assert.deepEqual(rec.grants, ['entity:Order:read']);
    assert.deepEqual(rec.limits, { cpuMs: 1000, wallMs: 10000, memoryMiB: 64 });
    assert.equal(rec.publicationVersion, before + 1);
    assert.equal(await head(c), before + 1);
    const entries = await journal(c);
    assert.equal(entries[0].publicationVersion, before + 1);
    assert.equal(entries[0].change.action, 'addHandler');
    assert.equal(entries[0].change.name, 'calc');
    assert.equal(entries[0].change.handler.sha256, sha(MAIN));
    assert.equal('bundleSha256' in entries[0].change.handler, false);
    assert.deepEqual(controlData(await c.get('/api/Schema/handlers'), 200, 'Handler', 'listed'), [rec]);
    assert.deepEqual(controlData(await c.get('/api/Schema/handlers/calc'), 200, 'Handler', 'read'), rec);
    expectError(await c.get('/api/Schema/handlers/nope'), 404, 'NOT_FOUND', 'Handler.NotFound');
    expectError(await c.get('/api/Schema/handlers/Bad-Name'), 404, 'NOT_FOUND', 'Handler.NotFound');
    // The same name again: 409, nothing published.
    expectError(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 409, 'CONFLICT', 'Handler.Exists', 'name');
    assert.equal(await head(c), before + 1);
    // Entity schema changes keep the handlers of the model.
    expectStatus(await c.post('/api/Schema/entities', { entityName: 'Tag', fields: [] }), 201);
    assert.equal(controlData(await c.get('/api/Schema/handlers'), 200).length, 1);
  });

  it('compile problems: syntax error with line and column, node:fs and packages refused, missing export, missing source and helper; nothing published', async () => {
    const c = await project();
    await file(c, 'src/bad.ts', 'export default function () {\n  const x = ;\n}\n');
    await file(c, 'src/fs.ts', "import { readFileSync } from 'node:fs';\nexport default () => readFileSync;\n");
    await file(c, 'src/pkg.js', "import x from 'lodash';\nexport default () => x;\n");
    await file(c, 'src/abs.js', "import x from '/etc/passwd';\nexport default () => x;\n");
    await file(c, 'src/named.ts', 'export function run() { return 1; }\n');
    await file(c, 'src/lost.ts', "import { y } from './nowhere';\nexport default () => y;\n");
    const before = await head(c);
    const post = (source: string, extra: object = {}) => c.post('/api/Schema/handlers', { name: 'h', surface: 'CoreHandler', source, ...extra });

    const syntax = expectError(await post('src/bad.ts'), 422, 'VALIDATION_FAILED', 'Handler.CompileFailed', 'source');
    assert.deepEqual({ ...syntax.details, message: undefined }, { path: 'src/bad.ts', line: 2, column: 13, message: undefined });
    assert.match(syntax.details.message, /Unexpected/);
    const fs = expectError(await post('src/fs.ts'), 422, 'VALIDATION_FAILED', 'Handler.ImportNotAllowed', 'source');
    assert.equal(fs.details.path, 'src/fs.ts');
    assert.equal(fs.details.line, 1);
    assert.match(fs.details.message, /node:fs/);
    assert.match(expectError(await post('src/pkg.js'), 422, 'VALIDATION_FAILED', 'Handler.ImportNotAllowed').details.message, /lodash.*package/);
    expectError(await post('src/abs.js'), 422, 'VALIDATION_FAILED', 'Handler.ImportNotAllowed');
    const missingExport = expectError(await post('src/named.ts'), 422, 'VALIDATION_FAILED', 'Handler.CompileFailed');
    assert.match(missingExport.details.message, /no export 'default'.*run/);
    controlData(await post('src/named.ts', { export: 'run' }), 201);
    const lostSource = expectError(await c.post('/api/Schema/handlers', { name: 'h2', surface: 'CoreHandler', source: 'src/none.ts' }), 422, 'VALIDATION_FAILED', 'Handler.CompileFailed');
    assert.deepEqual(lostSource.details, { path: 'src/none.ts', line: 0, column: 0, message: "no source asset 'src/none.ts' on this branch" });
    const lostHelper = expectError(await c.post('/api/Schema/handlers', { name: 'h3', surface: 'CoreHandler', source: 'src/lost.ts' }), 422, 'VALIDATION_FAILED', 'Handler.CompileFailed');
    assert.equal(lostHelper.details.path, 'src/lost.ts');
    assert.equal(lostHelper.details.line, 1);
    assert.equal(await head(c), before + 1, 'only the good declaration published');
  });

  it('body rules: name, surface, grants, limits (defaults, EdgeHandler fixed, envelope caps), operation vocabulary, entity and uniqueness', async () => {
    const boot = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c = boot.client;
    await defineEntity(c, ORDER);
    await file(c, 'src/main.ts', MAIN);
    await file(c, 'src/lib/math.ts', HELPER);
    const post = (body: object) => c.post('/api/Schema/handlers', { surface: 'CoreHandler', source: 'src/main.ts', ...body });
    expectError(await post({ name: 'Bad' }), 422, 'VALIDATION_FAILED', 'Handler.InvalidName', 'name');
    expectError(await post({ name: 'a'.repeat(64) }), 422, 'VALIDATION_FAILED', 'Handler.InvalidName', 'name');
    expectError(await post({ name: 'h', surface: 'Lambda' }), 422, 'VALIDATION_FAILED', 'Handler.InvalidSurface', 'surface');
    expectError(await post({ name: 'h', grants: ['root'] }), 422, 'VALIDATION_FAILED', 'Handler.InvalidGrants');
    expectError(await post({ name: 'h', limits: { cpuMs: 0 } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidLimits');
    expectError(await post({ name: 'h', surface: 'EdgeHandler', limits: { cpuMs: 100 } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidLimits', 'limits.cpuMs');
    expectError(await post({ name: 'h', source: '../x.ts' }), 422, 'VALIDATION_FAILED', 'Handler.InvalidSource', 'source');
    expectError(await post({ name: 'h', surface: 'ScheduledJob', operation: { input: { type: 'object' } } }), 422, 'VALIDATION_FAILED', 'Handler.OperationNotAllowed', 'operation');
    expectError(await post({ name: 'h', operation: { input: { type: 'object', $ref: '#' } } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidOperationSchema', 'operation.input.$ref');
    expectError(await post({ name: 'h', operation: { input: { type: 'object', properties: { a: { type: 'string', format: 'email' } } } } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidOperationSchema', 'operation.input.properties.a.format');
    expectError(await post({ name: 'h', operation: { input: { type: 'objekt' } } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidOperationSchema', 'operation.input.type');
    expectError(await post({ name: 'h', operation: { input: { type: 'string', pattern: '(' } } }), 422, 'VALIDATION_FAILED', 'Handler.InvalidOperationSchema', 'operation.input.pattern');
    expectError(await post({ name: 'h', operation: { entity: 'Nope', input: { type: 'object' } } }), 422, 'VALIDATION_FAILED', 'Handler.UnknownEntity', 'operation.entity');

    const bg = controlData(await post({ name: 'nightly', surface: 'ScheduledJob', limits: { wallMs: 30000 } }), 201);
    assert.deepEqual(bg.limits, { cpuMs: 10000, wallMs: 30000, memoryMiB: 128 });
    const edge = controlData(await post({ name: 'edge', surface: 'EdgeHandler', limits: { cpuMs: 50 } }), 201);
    assert.deepEqual(edge.limits, { cpuMs: 50, wallMs: 5000, memoryMiB: 64 });
    const opInput = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0, description: 'n' } }, additionalProperties: false };
    const withOp = controlData(await post({ name: 'approve', operation: { entity: 'Order', input: opInput, output: { type: 'object' } } }), 201);
    assert.deepEqual(withOp.operation, { name: 'approve', entity: 'Order', input: opInput, output: { type: 'object' } });
    expectError(await post({ name: 'other', operation: { name: 'approve', input: { type: 'object' } } }), 409, 'CONFLICT', 'Handler.OperationExists', 'operation.name');
    // An entity an operation is bound to cannot be dropped under it.
    expectError(await c.delete('/api/Schema/entities?entityName=Order'), 409, 'CONFLICT', 'Schema.EntityReferenced');

    // A governance envelope caps limits; larger → 422.
    controlData(await c.put(`/api/projects/${boot.projectId}/governance/inheritance-policy`, { envelope: { maxHandlerLimits: { memoryMiB: 100 } } }), 200);
    expectError(await post({ name: 'big', surface: 'ScheduledJob' }), 422, 'VALIDATION_FAILED', 'Handler.LimitsExceedEnvelope', 'limits.memoryMiB');
    controlData(await post({ name: 'small', surface: 'ScheduledJob', limits: { memoryMiB: 100 } }), 201);
  });

  it('PUT re-reads and re-pins the source; editing the file alone changes nothing served; DELETE → 204 and a new publication', async () => {
    const c = await project();
    const first = controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201);
    const files = controlData(await c.get('/api/SourceAsset/file?prefix=src/main.ts'), 200);
    const edited = `${MAIN}// edited\n`;
    controlData(await c.put(`/api/SourceAsset/file/${files[0].id}/content`, { content: edited }), 200);
    assert.equal(controlData(await c.get('/api/Schema/handlers/calc'), 200).sha256, sha(MAIN), 'still pinned');
    assert.equal(await head(c), first.publicationVersion);
    const put = controlData(await c.put('/api/Schema/handlers/calc', { surface: 'CoreHandler', source: 'src/main.ts' }), 200, 'Handler', 'updated');
    assert.equal(put.sha256, sha(edited));
    assert.equal(put.publicationVersion, first.publicationVersion + 1);
    assert.equal(controlData(await c.get('/api/Schema/handlers/calc'), 200).sha256, sha(edited));
    expectError(await c.put('/api/Schema/handlers/nope', { surface: 'CoreHandler', source: 'src/main.ts' }), 404, 'NOT_FOUND', 'Handler.NotFound');
    expectError(await c.put('/api/Schema/handlers/calc', { name: 'other', surface: 'CoreHandler', source: 'src/main.ts' }), 422, 'VALIDATION_FAILED', 'Handler.InvalidName', 'name');
    expectStatus(await c.delete('/api/Schema/handlers/calc'), 204);
    assert.equal(await head(c), first.publicationVersion + 2);
    assert.deepEqual(controlData(await c.get('/api/Schema/handlers'), 200), []);
    expectError(await c.delete('/api/Schema/handlers/calc'), 404, 'NOT_FOUND', 'Handler.NotFound');
    const actions = (await journal(c)).slice(0, 3).map((e) => [e.change.action, e.change.name]);
    assert.deepEqual(actions, [['dropHandler', 'calc'], ['alterHandler', 'calc'], ['addHandler', 'calc']]);
  });

  it('journal rollback restores the handler as it was pinned', async () => {
    const c = await project();
    controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201);
    const files = controlData(await c.get('/api/SourceAsset/file?prefix=src/main.ts'), 200);
    controlData(await c.put(`/api/SourceAsset/file/${files[0].id}/content`, { content: `${MAIN}//2\n` }), 200);
    controlData(await c.put('/api/Schema/handlers/calc', { surface: 'CoreHandler', source: 'src/main.ts' }), 200);
    const alter = (await journal(c))[0];
    assert.equal(alter.change.action, 'alterHandler');
    const rb = controlData(await c.post(`/api/Schema/migrate/rollback/${alter.id}`), 200, 'Schema');
    assert.equal(controlData(await c.get('/api/Schema/handlers/calc'), 200).sha256, sha(MAIN));
    assert.equal((await journal(c))[0].change.changes[0].action, 'alterHandler');
    assert.equal(rb.publicationVersion, await head(c));
  });

  it('branches copy handlers; a proposal diff lists addHandler/alterHandler/dropHandler; merging carries them; requireProposal refuses', async () => {
    const c = await project();
    controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201);
    controlData(await c.post('/api/Schema/handlers', { name: 'gone', surface: 'ScheduledJob', source: 'src/main.ts' }), 201);
    const b = controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    const dev = c.with({ branch: 'dev' });
    assert.deepEqual(controlData(await dev.get('/api/Schema/handlers'), 200).map((h: any) => h.name), ['calc', 'gone']);
    const devFiles = controlData(await dev.get('/api/SourceAsset/file?prefix=src/main.ts'), 200);
    const v2 = `${MAIN}// dev\n`;
    controlData(await dev.put(`/api/SourceAsset/file/${devFiles[0].id}/content`, { content: v2 }), 200);
    controlData(await dev.put('/api/Schema/handlers/calc', { surface: 'CoreHandler', source: 'src/main.ts' }), 200);
    expectStatus(await dev.delete('/api/Schema/handlers/gone'), 204);
    controlData(await dev.post('/api/Schema/handlers', { name: 'fresh', surface: 'EventConsumer', source: 'src/main.ts', grants: ['entity:*:read'] }), 201);
    // main is untouched by dev's changes.
    assert.equal(controlData(await c.get('/api/Schema/handlers/calc'), 200).sha256, sha(MAIN));

    const p = controlData(await c.post('/api/proposals', { title: 'code', base: 'main', head: 'dev' }), 201);
    const full = controlData(await c.get(`/api/proposals/${p.id}`), 200);
    assert.deepEqual(full.diff, [{ op: 'alterHandler', name: 'calc' }, { op: 'addHandler', name: 'fresh' }, { op: 'dropHandler', name: 'gone' }]);
    controlData(await c.post(`/api/proposals/${p.id}/merge`), 200, 'Proposal', 'merged');
    const main = controlData(await c.get('/api/Schema/handlers'), 200);
    assert.deepEqual(main.map((h: any) => [h.name, h.sha256]), [['calc', sha(v2)], ['fresh', sha(v2)]]);
    assert.equal((await journal(c))[0].change.action, 'merge');

    controlData(await c.put(`/api/Branch/branches/${b.id}/protection`, { requireProposal: true, requiredApprovals: 0 }), 200);
    expectError(await dev.post('/api/Schema/handlers', { name: 'x', surface: 'CoreHandler', source: 'src/main.ts' }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await dev.put('/api/Schema/handlers/calc', { surface: 'CoreHandler', source: 'src/main.ts' }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
    expectError(await dev.delete('/api/Schema/handlers/calc'), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');
  });

  it('deployments serve the pinned publication\'s handlers (with ramp), rollback restores the head\'s; the branch header sees the head', async () => {
    const c = await project();
    const v1 = controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201).publicationVersion;
    const files = controlData(await c.get('/api/SourceAsset/file?prefix=src/main.ts'), 200);
    const edited = `${MAIN}// v2\n`;
    controlData(await c.put(`/api/SourceAsset/file/${files[0].id}/content`, { content: edited }), 200);
    const v2 = controlData(await c.put('/api/Schema/handlers/calc', { surface: 'CoreHandler', source: 'src/main.ts' }), 200).publicationVersion;
    const served = async (client: Client): Promise<[number, string]> => {
      const r = controlData(await client.get('/api/Schema/handlers/calc'), 200);
      return [r.publicationVersion, r.sha256];
    };
    assert.deepEqual(await served(c), [v2, sha(edited)]);
    const d = controlData(await c.post('/api/deployments', { target: { branch: 'main', publicationVersion: v1 }, ramp: [100], bake: 0 }), 202);
    await untilDeployment(c, d.id, ['succeeded']);
    assert.deepEqual(await served(c), [v1, sha(MAIN)]);
    assert.deepEqual(await served(c.with({ branch: 'main' })), [v2, sha(edited)], 'the branch header gets the head');
    controlData(await c.post(`/api/deployments/${d.id}/rollback`, { toVersion: v2 }), 202);
    await untilDeployment(c, d.id, ['rolledBack']);
    assert.deepEqual(await served(c), [v2, sha(edited)]);
  });

  it('a project with no publication yet: GET lists none; the first declaration is publication 1', async () => {
    const c = (await bootstrapProject(server.url, server.adminToken, newSlug())).client;
    assert.deepEqual(controlData(await c.get('/api/Schema/handlers'), 200, 'Handler', 'listed'), []);
    await file(c, 'h.js', 'export default () => 1;\n');
    const rec = controlData(await c.post('/api/Schema/handlers', { name: 'first', surface: 'ManagementHandler', source: 'h.js' }), 201);
    assert.equal(rec.publicationVersion, 1);
    assert.deepEqual(controlData(await c.get('/api/Schema/handlers'), 200).map((h: any) => h.name), ['first']);
  });

  it('GET /api/Schema/diff lists handler changes in `handlers`; entities unchanged', async () => {
    const c = await project();
    const v = controlData(await c.post('/api/Schema/handlers', { name: 'calc', surface: 'CoreHandler', source: 'src/main.ts' }), 201).publicationVersion;
    const diff = controlData(await c.get(`/api/Schema/diff?from=${v - 1}&to=${v}`), 200);
    assert.deepEqual([diff.added, diff.removed, diff.changed], [[], [], []]);
    assert.deepEqual(diff.handlers, [{ op: 'addHandler', name: 'calc' }]);
    expectStatus(await c.delete('/api/Schema/handlers/calc'), 204);
    assert.deepEqual(controlData(await c.get(`/api/Schema/diff?from=${v}`), 200).handlers, [{ op: 'dropHandler', name: 'calc' }]);
  });
});
