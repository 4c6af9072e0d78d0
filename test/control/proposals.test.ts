/**
 * Proposals over HTTP (CONTRACT: Control plane, "Proposals"): create/list/read with
 * diff and validation against base's rows, approvals, merge gates (409 + unmetGates),
 * the merge as one migration, one base publication and one journal entry, and a base
 * that moved after the proposal was read (re-validated, never merged on a stale plan).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const TAG = { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] };
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

forEachBackend('proposals', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  /** main has Customer with one row; branch `dev` was copied from it. */
  async function project(): Promise<Client> {
    return (await projectWithId()).c;
  }

  async function projectWithId(): Promise<{ c: Client; projectId: string }> {
    const boot = await bootstrapProject(server.url, server.adminToken, newSlug());
    const c = boot.client;
    await defineEntity(c, CUSTOMER);
    expectStatus(await c.post('/api/customers', { email: 'ada@example.com' }), 201);
    controlData(await c.post('/api/branches', { name: 'dev' }), 201);
    return { c, projectId: boot.projectId };
  }

  it('create, list and read: CONTRACT shapes, diff of head against base, validation ok', async () => {
    const c = await project();
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.post('/api/Schema/entities', TAG), 201);
    expectStatus(await dev.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'age', type: 'Int', nullable: true }] }), 200);

    const p = controlData(await c.post('/api/proposals', { title: 'tags', base: 'main', head: 'dev' }), 201, 'Proposal', 'created');
    assert.deepEqual(Object.keys(p).sort(), ['base', 'createdAt', 'description', 'head', 'id', 'state', 'title']);
    assert.equal(p.state, 'open');
    assert.equal(p.description, null);
    assert.match(p.createdAt, ISO_UTC);

    const list = controlData(await c.get('/api/proposals'), 200, 'Proposal', 'listed');
    assert.deepEqual(list.map((x: any) => x.id), [p.id]);

    const full = controlData(await c.get(`/api/proposals/${p.id}`), 200, 'Proposal', 'read');
    assert.equal(full.state, 'open');
    assert.deepEqual(full.diff, [
      { op: 'alterEntity', entityName: 'Customer', fields: [{ op: 'addField', field: 'age' }] },
      { op: 'addEntity', entityName: 'Tag', fields: [{ op: 'addField', field: 'label' }] },
    ]);
    assert.deepEqual(full.validation, { ok: true, problems: [] });
    assert.deepEqual(full.approvals, []);
  });

  it('bad input: unknown branch 404, bad body 422, unknown proposal 404', async () => {
    const c = await project();
    expectError(await c.post('/api/proposals', { title: 't', base: 'main', head: 'nope' }), 404, 'NOT_FOUND', 'Scope.BranchNotFound');
    expectError(await c.post('/api/proposals', { title: 't', base: 'main', head: 'Bad_Name' }), 422, 'VALIDATION_FAILED', 'Branch.InvalidName', 'head');
    expectError(await c.post('/api/proposals', { base: 'main', head: 'dev' }), 422, 'VALIDATION_FAILED', 'Proposal.InvalidBody', 'title');
    expectError(await c.post('/api/proposals', [1]), 422, 'VALIDATION_FAILED', 'Proposal.InvalidBody');
    expectError(await c.get('/api/proposals/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND', 'Proposal.NotFound');
    expectError(await c.get('/api/proposals/not-a-uuid'), 404, 'NOT_FOUND', 'Proposal.NotFound');
    expectError(await c.post('/api/proposals/not-a-uuid/merge', {}), 404, 'NOT_FOUND', 'Proposal.NotFound');
  });

  it('validation finds a not-null conflict on base rows; merge answers 409 GatesNotMet and nothing changes', async () => {
    const c = await project();
    const dev = c.with({ branch: 'dev' });
    // On dev the one customer gets a value, then the field becomes required there.
    const row = (await dev.get('/api/customers')).body.data[0];
    expectStatus(await dev.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'tier', type: 'String', nullable: true }] }), 200);
    expectStatus(await dev.patch(`/api/customers/${row.id}`, { tier: 'gold' }), 200);
    expectStatus(await dev.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }, { name: 'tier', type: 'String', nullable: false }] }), 200);

    const p = controlData(await c.post('/api/proposals', { title: 'tier', base: 'main', head: 'dev' }), 201);
    const full = controlData(await c.get(`/api/proposals/${p.id}`), 200);
    assert.equal(full.validation.ok, false);
    assert.equal(full.validation.problems.length, 1);
    assert.equal(full.validation.problems[0].entityName, 'Customer');
    assert.equal(full.validation.problems[0].field, 'tier');
    assert.equal(full.validation.problems[0].reasonCode, 'Proposal.NotNullViolation');

    const journalBefore = controlData(await c.get('/api/Schema/journal'), 200);
    const e = expectError(await c.post(`/api/proposals/${p.id}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet');
    assert.deepEqual(e.unmetGates, ['validation']);
    assert.deepEqual(controlData(await c.get('/api/Schema/journal'), 200), journalBefore, 'nothing changed');
    assert.equal(controlData(await c.get(`/api/proposals/${p.id}`), 200).state, 'open');
  });

  it('unique conflict: a field that becomes unique over duplicate base rows fails validation', async () => {
    const c = await project();
    expectStatus(await c.post('/api/customers', { email: 'ada@example.com' }), 201);
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true, unique: true }] }), 200);
    const p = controlData(await c.post('/api/proposals', { title: 'unique', base: 'main', head: 'dev' }), 201);
    const full = controlData(await c.get(`/api/proposals/${p.id}`), 200);
    assert.deepEqual(full.validation.problems.map((x: any) => [x.field, x.reasonCode]), [['email', 'Proposal.UniqueViolation']]);
  });

  it('approvals gate the merge; approving twice adds nothing; the merge is one migration, publication and journal entry', async () => {
    const { c, projectId } = await projectWithId();
    controlData(await c.put(`/api/Branch/branches/${controlData(await c.get('/api/branches/main'), 200).id}/protection`, { requireProposal: true, requiredApprovals: 1 }), 200);
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.post('/api/Schema/entities', TAG), 201);
    // Direct changes on protected main are refused: only a merge changes it.
    expectError(await c.post('/api/Schema/entities', { entityName: 'Other', fields: [] }), 403, 'ACCESS_DENIED', 'Branch.ProposalRequired');

    const p = controlData(await c.post('/api/proposals', { title: 'tags', base: 'main', head: 'dev', description: 'adds Tag' }), 201);
    assert.equal(p.description, 'adds Tag');
    const e = expectError(await c.post(`/api/proposals/${p.id}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet');
    assert.deepEqual(e.unmetGates, ['approvals']);

    // A project user without the capability cannot approve, nor merge, nor create proposals.
    const user = c.with({ token: await projectUserToken(c) });
    const denied = expectError(await user.post(`/api/proposals/${p.id}/approve`, {}), 403, 'ACCESS_DENIED', 'Proposal.ApproverGrantMissing');
    assert.deepEqual(denied.missingGrants, ['branch:main:approve']);
    expectError(await user.post(`/api/proposals/${p.id}/merge`, {}), 403, 'ACCESS_DENIED', (await user.post(`/api/proposals/${p.id}/merge`, {})).body.error.reasonCode);
    expectStatus(await user.post('/api/proposals', { title: 'x', base: 'main', head: 'dev' }), 403);
    // A grant on another branch does not help; `branch:main:approve` does.
    const admin = c;
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'branch:dev:approve' }), 201);
    expectError(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'branch:Bad_Name:approve' }), 422, 'VALIDATION_FAILED', 'CapabilityGrant.InvalidGrant', 'grant');
    expectStatus(await admin.post(`/api/projects/${projectId}/capability-grants`, { role: 'authenticated', grant: 'branch:main:approve' }), 201);
    let approvedByUser = await user.post(`/api/proposals/${p.id}/approve`, {});
    for (let i = 0; i < 30 && approvedByUser.status === 403; i++) {
      await new Promise((r) => setTimeout(r, 200));
      approvedByUser = await user.post(`/api/proposals/${p.id}/approve`, {});
    }
    const afterUser = controlData(approvedByUser, 200, 'Proposal', 'approved');
    assert.equal(afterUser.approvals.length, 1);
    assert.match(afterUser.approvals[0].subjectId, /^[0-9a-f-]{36}$/);

    expectStatus(await c.post(`/api/proposals/${p.id}/approve`, {}), 200);
    expectStatus(await c.post(`/api/proposals/${p.id}/approve`, {}), 200);
    const approved = controlData(await c.get(`/api/proposals/${p.id}`), 200);
    assert.equal(approved.approvals.length, 2, 'one approval per actor');
    assert.equal(approved.approvals[1].actor, 'platform-admin');
    assert.match(approved.approvals[0].at, ISO_UTC);

    const headBefore = controlData(await c.get('/api/branches/main'), 200).head.publicationVersion;
    const merged = controlData(await c.post(`/api/proposals/${p.id}/merge`, {}), 200, 'Proposal', 'merged');
    assert.deepEqual(Object.keys(merged).sort(), ['id', 'publicationVersion', 'state']);
    assert.equal(merged.state, 'merged');
    assert.ok(merged.publicationVersion > headBefore);
    assert.equal(controlData(await c.get('/api/branches/main'), 200).head.publicationVersion, merged.publicationVersion);

    const journal = controlData(await c.get('/api/Schema/journal'), 200);
    assert.equal(journal[0].publicationVersion, merged.publicationVersion);
    assert.equal(journal[0].change.action, 'merge');
    assert.equal(journal[0].state, 'applied');
    assert.equal(journal.filter((j: any) => j.publicationVersion > headBefore).length, 1, 'one journal entry');
    // main now serves Tag; head's rows were not merged.
    const tags = await c.get('/api/tags');
    expectStatus(tags, 200);
    assert.deepEqual(tags.body.data, []);

    expectError(await c.post(`/api/proposals/${p.id}/merge`, {}), 409, 'CONFLICT', 'Proposal.AlreadyMerged');
    assert.equal(controlData(await c.get(`/api/proposals/${p.id}`), 200).state, 'merged');
  });

  it('stale base: base moved after the proposal was read; the merge re-validates on the new base', async () => {
    const c = await project();
    const dev = c.with({ branch: 'dev' });
    expectStatus(await dev.put('/api/Schema/entities', { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true, unique: true }] }), 200);
    const p = controlData(await c.post('/api/proposals', { title: 'unique email', base: 'main', head: 'dev' }), 201);
    assert.equal(controlData(await c.get(`/api/proposals/${p.id}`), 200).validation.ok, true);
    // Base moves: a duplicate row and a new entity on main.
    expectStatus(await c.post('/api/customers', { email: 'ada@example.com' }), 201);
    expectStatus(await c.post('/api/Schema/entities', TAG), 201);
    const e = expectError(await c.post(`/api/proposals/${p.id}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet');
    assert.deepEqual(e.unmetGates, ['validation']);
    // The diff is against base's current head: Tag, now on main only, shows as a drop.
    const full = controlData(await c.get(`/api/proposals/${p.id}`), 200);
    assert.deepEqual(full.diff.map((d: any) => [d.op, d.entityName]), [['alterEntity', 'Customer'], ['dropEntity', 'Tag']]);
    const tags = await c.get('/api/tags');
    expectStatus(tags, 200);
  });

  it('concurrent merges into one base: exactly one wins, the rest 409; the loser re-validates on the new base', async () => {
    const c = await project();
    controlData(await c.post('/api/branches', { name: 'dev2' }), 201);
    expectStatus(await c.with({ branch: 'dev' }).post('/api/Schema/entities', TAG), 201);
    expectStatus(await c.with({ branch: 'dev2' }).post('/api/Schema/entities', { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: true }] }), 201);
    const a = controlData(await c.post('/api/proposals', { title: 'a', base: 'main', head: 'dev' }), 201);
    const a2 = controlData(await c.post('/api/proposals', { title: 'a again', base: 'main', head: 'dev' }), 201);
    const b = controlData(await c.post('/api/proposals', { title: 'b', base: 'main', head: 'dev2' }), 201);
    const before = controlData(await c.get('/api/Schema/journal'), 200).length;
    const replies = await Promise.all([a, a, a2].map((p) => c.post(`/api/proposals/${p.id}/merge`, {})));
    const ok = replies.filter((r) => r.status === 200);
    assert.equal(ok.length, 1, JSON.stringify(replies.map((r) => [r.status, r.body.error?.reasonCode])));
    for (const r of replies) if (r.status !== 200) expectError(r, 409, 'CONFLICT', r.body.error.reasonCode);
    const journal = controlData(await c.get('/api/Schema/journal'), 200);
    assert.equal(journal.length, before + 1, 'one merge applied');
    // b was validated before the merge: read now, its diff is against the moved base (it would drop Tag).
    const full = controlData(await c.get(`/api/proposals/${b.id}`), 200);
    assert.equal(full.state, 'open');
    assert.deepEqual(full.diff.map((d: any) => [d.op, d.entityName]), [['addEntity', 'Note'], ['dropEntity', 'Tag']]);
  });
});
