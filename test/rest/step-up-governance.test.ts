/**
 * The step-up scenario end to end (CONTRACT: Project hierarchy and
 * governance, Step-up, Explainability): a parent's envelope requires TOTP for
 * `entity:Payment:*`; a child's user is challenged, passes a TOTP challenge,
 * and its elevated token reads payments while its password token still
 * cannot. A stronger requirement (WebAuthn) is not met by a TOTP elevation,
 * and the recorded decision of a challenged request is `Challenge`.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, defineEntity } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus } from '../support/expect.js';
import { enrolTotp, jwtPayload, newUser } from '../support/mfa.js';

forEachBackend('step-up demanded by a governance envelope', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend });
    admin = new Client(server.url, { token: server.adminToken });
  });
  after(async () => {
    await server?.close();
  });

  it('a TOTP challenge elevates the session past requireStrength; a weaker elevation does not pass a stronger demand', async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    expectStatus(await admin.post('/api/TenantRecord', { slug: tenant, name: tenant }), 201);
    const parent = await admin.post('/api/projects/create', { tenant, slug: 'parent', name: 'Parent' });
    expectStatus(parent, 201);
    const child = await admin.post(`/api/projects/${parent.body.data.id}/children`, { slug: 'child', name: 'Child' });
    expectStatus(child, 201);
    const childId = child.body.data.id as string;
    const scoped = admin.with({ tenant, project: 'child' });
    await defineEntity(scoped, { entityName: 'Payment', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
    await defineEntity(scoped, { entityName: 'Invoice', fields: [{ name: 'amount', type: 'Int', nullable: false }] });
    expectStatus(await scoped.post('/api/payments', { amount: 7 }), 201);
    expectStatus(await scoped.post('/api/invoices', { amount: 9 }), 201);

    const u = await newUser(scoped);
    for (const g of ['entity:Payment:read', 'entity:Invoice:read']) {
      expectStatus(await admin.post(`/api/projects/${childId}/capability-grants`, { subjectId: u.subjectId, grant: g }), 201);
    }
    const app = await enrolTotp(u);
    const envelope = { requireStrength: { 'entity:Payment:*': 'mfa-totp', 'entity:Invoice:read': 'mfa-webauthn' } };
    expectStatus(await admin.put(`/api/projects/${parent.body.data.id}/governance/inheritance-policy`, { envelope }), 200);

    // The password session is challenged, and the record of that request says so.
    const refused = await u.as.get('/api/payments');
    const challenge = expectError(refused, 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal(challenge.decision, 'Challenge');
    assert.equal(challenge.requiredStrength, 'mfa-totp');
    const explained = await u.as.get(challenge.explainUrl as string);
    expectStatus(explained, 200);
    assert.equal(explained.body.data.decision, 'Challenge');
    assert.equal(explained.body.data.reasonCode, 'Access.StepUpRequired');

    // Explainability answers what stage 3 would: Challenge for the password session.
    const asked = await u.as.post('/api/Explainability/access', { entity: 'Payment', operation: 'read' });
    expectStatus(asked, 200);
    assert.equal(asked.body.data.decision, 'Challenge');
    assert.equal(asked.body.data.reasonCode, 'Access.StepUpRequired');
    assert.equal(asked.body.data.requiredStrength, 'mfa-totp');

    // The spec's route pair: start, then verify with a TOTP code → a login-shaped elevated session.
    const started = await u.as.post('/api/identity/challenge/start', { subjectId: u.subjectId, requireStrength: 'mfa-totp', reason: 'read payments' });
    assert.ok(started.status === 200 || started.status === 201, `start answered ${started.status}`);
    const verified = await u.as.post('/api/identity/challenge/verify', { challengeId: started.body.data.challengeId, proof: { kind: 'totp', code: app.code() } });
    expectStatus(verified, 200);
    for (const k of ['accessToken', 'refreshToken', 'expiresAt', 'sessionId']) assert.ok(k in verified.body, `session field ${k} at the top level`);
    assert.equal(jwtPayload(verified.body.accessToken).strength, 'mfa-totp');
    const elevated = u.anon.with({ token: verified.body.accessToken });

    const payments = await elevated.get('/api/payments');
    expectStatus(payments, 200);
    assert.equal(payments.body.data.length, 1);
    const allowed = await elevated.post('/api/Explainability/access', { entity: 'Payment', operation: 'read' });
    assert.equal(allowed.body.data.decision, 'Allow');
    // The password token is still refused: elevation belongs to the new session only.
    expectError(await u.as.get('/api/payments'), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');

    // TOTP does not meet a WebAuthn demand.
    const stronger = expectError(await elevated.get('/api/invoices'), 403, 'ACCESS_DENIED', 'Access.StepUpRequired');
    assert.equal(stronger.requiredStrength, 'mfa-webauthn');
    assert.equal(stronger.decision, 'Challenge');
    // A TOTP proof cannot complete a WebAuthn challenge.
    const webauthnChallenge = await u.as.post('/api/identity/challenges', { subjectId: u.subjectId, requireStrength: 'mfa-webauthn' });
    expectStatus(webauthnChallenge, 201);
    const weak = await u.as.post(`/api/identity/challenges/${webauthnChallenge.body.data.challengeId}/complete`, { proof: { kind: 'totp', code: app.code() } });
    assert.ok(weak.status === 401 || weak.status === 403, `a TOTP proof on a WebAuthn challenge answered ${weak.status}`);
  });
});
