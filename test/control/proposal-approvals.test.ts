/**
 * Approvals are bound to the head they reviewed and to the approver's current grant (issue 22
 * finding 2; CONTRACT "Proposals"; docs/proposals-and-deployments.md): a push to head voids the
 * approvals made before it, a revoked `branch:<base>:approve` stops counting, the proposal
 * shows which approvals are current, and the merge applies exactly the head that was approved.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, bootstrapProject, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { controlData, newSlug, projectUserToken } from './support.js';

const CUSTOMER = { entityName: 'Customer', fields: [{ name: 'email', type: 'String', nullable: true }] };
const TAG = { entityName: 'Tag', fields: [{ name: 'label', type: 'String', nullable: true }] };
const UNREVIEWED = { entityName: 'Note', fields: [{ name: 'text', type: 'String', nullable: true }] };

forEachBackend('proposal approvals', (backend: Backend) => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ backend });
  });
  after(async () => {
    await server?.close();
  });

  interface Setup { admin: Client; dev: Client; user: Client; projectId: string; grantId: string; proposalId: string }

  /** main (2 approvals required) with Customer; branch dev adds Tag; a user holding `branch:main:approve`; an open proposal dev → main. */
  async function setup(): Promise<Setup> {
    const boot = await bootstrapProject(server.url, server.adminToken, newSlug());
    const admin = boot.client;
    await defineEntity(admin, CUSTOMER);
    controlData(await admin.post('/api/branches', { name: 'dev' }), 201);
    const mainId = controlData(await admin.get('/api/branches/main'), 200).id;
    controlData(await admin.put(`/api/Branch/branches/${mainId}/protection`, { requireProposal: true, requiredApprovals: 2 }), 200);
    const dev = admin.with({ branch: 'dev' });
    expectStatus(await dev.post('/api/Schema/entities', TAG), 201);
    const grant = await admin.post(`/api/projects/${boot.projectId}/capability-grants`, { role: 'authenticated', grant: 'branch:main:approve' });
    expectStatus(grant, 201);
    const user = admin.with({ token: await projectUserToken(admin) });
    const p = controlData(await admin.post('/api/proposals', { title: 'tags', base: 'main', head: 'dev' }), 201);
    return { admin, dev, user, projectId: boot.projectId, grantId: grant.body.data.grantId, proposalId: p.id };
  }

  const headOf = async (c: Client, branch: string): Promise<number> => controlData(await c.get(`/api/branches/${branch}`), 200).head.publicationVersion;
  it('the probe: approver revoked, unreviewed entity pushed to head, admin approves: the merge is refused and main never gets it', async () => {
    const s = await setup();
    const { admin, user } = s;
    const head0 = await headOf(admin, 'dev');
    const byUser = controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200, 'Proposal', 'approved');

    expectStatus(await admin.delete(`/api/projects/${s.projectId}/capability-grants/${s.grantId}`), 204);
    expectStatus(await s.dev.post('/api/Schema/entities', UNREVIEWED), 201);
    const head1 = await headOf(admin, 'dev');
    assert.ok(head1 > head0);
    controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);

    const e = expectError(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet');
    assert.deepEqual(e.unmetGates, ['approvals']);
    assert.deepEqual(byUser.approvals.map((a: any) => [a.actor.startsWith('user:'), a.headPublicationVersion, a.current]), [[true, head0, true]]);
    assert.equal(byUser.headVersion, head0);
    const read = controlData(await admin.get(`/api/proposals/${s.proposalId}`), 200);
    assert.equal(read.state, 'open');
    assert.deepEqual(read.approvals.map((a: any) => [a.actor === 'platform-admin', a.headPublicationVersion, a.current]), [[false, head0, false], [true, head1, true]]);
    for (const a of read.approvals) assert.deepEqual(Object.keys(a).filter((k) => !['actor', 'subjectId', 'at', 'headPublicationVersion', 'basePublicationVersion', 'current'].includes(k)), []);
    expectStatus(await admin.get('/api/notes'), 404);
    assert.equal(await headOf(admin, 'main'), read.baseVersion);
  });

  it('a push to head voids every earlier approval; approving again records a fresh one for the new head, and the merge applies it', async () => {
    const s = await setup();
    const { admin, user } = s;
    const head0 = await headOf(admin, 'dev');
    controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    const both = controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    // Approving the same head again adds nothing (CONTRACT: one approval per actor).
    const again = controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    assert.deepEqual(again.approvals, both.approvals);

    expectStatus(await s.dev.post('/api/Schema/entities', UNREVIEWED), 201);
    const head1 = await headOf(admin, 'dev');
    assert.deepEqual(expectError(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet').unmetGates, ['approvals']);
    const stale = controlData(await admin.get(`/api/proposals/${s.proposalId}`), 200);
    assert.deepEqual(stale.approvals.map((a: any) => [a.headPublicationVersion, a.current]), [[head0, false], [head0, false]]);

    // An approver that names the head it reviewed is refused when head has moved since.
    expectError(await user.post(`/api/proposals/${s.proposalId}/approve`, { headPublicationVersion: head0 }), 409, 'CONFLICT', 'Proposal.HeadMoved', 'headPublicationVersion');
    expectError(await user.post(`/api/proposals/${s.proposalId}/approve`, { headPublicationVersion: 'x' }), 422, 'VALIDATION_FAILED', 'Proposal.InvalidBody', 'headPublicationVersion');
    controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, { headPublicationVersion: head1 }), 200);
    const renewed = controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    assert.deepEqual(both.approvals.map((a: any) => [a.headPublicationVersion, a.current]), [[head0, true], [head0, true]]);
    assert.equal(renewed.approvals.length, 2, 'still one approval per actor');
    assert.deepEqual(renewed.approvals.map((a: any) => [a.headPublicationVersion, a.current]), [[head1, true], [head1, true]]);
    assert.ok(renewed.approvals.every((a: any) => a.at > stale.approvals.find((x: any) => x.actor === a.actor).at), 'fresh approvals');

    const merged = controlData(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 200, 'Proposal', 'merged');
    const journal = controlData(await admin.get('/api/Schema/journal'), 200);
    assert.equal(journal[0].publicationVersion, merged.publicationVersion);
    assert.equal(journal[0].change.headPublicationVersion, head1);
    expectStatus(await admin.get('/api/notes'), 200);
    expectStatus(await admin.get('/api/tags'), 200);
  });

  it('a change to base voids the approvals too (the diff they reviewed changed); approving again renews them', async () => {
    const s = await setup();
    const { admin, user } = s;
    const base0 = await headOf(admin, 'main');
    controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    const both = controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    assert.deepEqual(both.approvals.map((a: any) => [a.basePublicationVersion, a.current]), [[base0, true], [base0, true]]);
    // main moves on its own (protection lifted for a direct change): the diff the approvers saw is gone.
    const mainId = controlData(await admin.get('/api/branches/main'), 200).id;
    controlData(await admin.put(`/api/Branch/branches/${mainId}/protection`, { requireProposal: false, requiredApprovals: 2 }), 200);
    expectStatus(await admin.post('/api/Schema/entities', UNREVIEWED), 201);
    const base1 = await headOf(admin, 'main');
    const stale = controlData(await admin.get(`/api/proposals/${s.proposalId}`), 200);
    assert.deepEqual(stale.approvals.map((a: any) => [a.basePublicationVersion, a.current]), [[base0, false], [base0, false]]);
    assert.deepEqual(expectError(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet').unmetGates, ['approvals']);
    const renewed = controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    assert.deepEqual(renewed.approvals.filter((a: any) => a.current).map((a: any) => [a.actor.startsWith('user:'), a.basePublicationVersion]), [[true, base1]]);
  });

  it('a revoked approver stops counting although head did not move', async () => {
    const s = await setup();
    const { admin, user } = s;
    controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    expectStatus(await admin.delete(`/api/projects/${s.projectId}/capability-grants/${s.grantId}`), 204);
    const read = controlData(await admin.get(`/api/proposals/${s.proposalId}`), 200);
    assert.deepEqual(read.approvals.map((a: any) => [a.actor === 'platform-admin', a.current]), [[false, false], [true, true]]);
    assert.deepEqual(expectError(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet').unmetGates, ['approvals']);
    // A grant to the subject itself (not through its role) counts again.
    const subjectId = read.approvals[0].subjectId;
    expectStatus(await admin.post(`/api/projects/${s.projectId}/capability-grants`, { subjectId, grant: 'branch:*:approve' }), 201);
    controlData(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 200, 'Proposal', 'merged');
  });

  it('an API key approver counts while the key exists with the grant; deleted, it stops counting', async () => {
    const s = await setup();
    const { admin } = s;
    const k = await admin.post(`/api/projects/${s.projectId}/api-keys`, { name: 'approver', grants: ['branch:main:approve'] });
    expectStatus(k, 201);
    const secret = (await admin.post(`/api/CredentialReveal/${k.body.data.revealTokenId}/reveal`, {})).body.data.secret as string;
    controlData(await admin.with({ token: secret }).post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    const both = controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
    assert.deepEqual(both.approvals.map((a: any) => [a.actor, a.current]), [[`apikey:${k.body.data.id}`, true], ['platform-admin', true]]);
    expectStatus(await admin.delete(`/api/projects/${s.projectId}/api-keys/${k.body.data.id}`), 204);
    const read = controlData(await admin.get(`/api/proposals/${s.proposalId}`), 200);
    assert.deepEqual(read.approvals.map((a: any) => a.current), [false, true]);
    assert.deepEqual(expectError(await admin.post(`/api/proposals/${s.proposalId}/merge`, {}), 409, 'CONFLICT', 'Proposal.GatesNotMet').unmetGates, ['approvals']);
  });

  it('a push to head racing the merge: the merge applies the approved head or refuses, never the unreviewed push', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await setup();
      const { admin, user } = s;
      controlData(await user.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
      controlData(await admin.post(`/api/proposals/${s.proposalId}/approve`, {}), 200);
      const [merge, push] = await Promise.all([
        admin.post(`/api/proposals/${s.proposalId}/merge`, {}),
        s.dev.post('/api/Schema/entities', UNREVIEWED),
      ]);
      expectStatus(push, 201);
      if (merge.status === 200) {
        expectStatus(await admin.get('/api/tags'), 200);
        expectStatus(await admin.get('/api/notes'), 404);
      } else {
        assert.deepEqual(expectError(merge, 409, 'CONFLICT', 'Proposal.GatesNotMet').unmetGates, ['approvals']);
      }
    }
  });
});
