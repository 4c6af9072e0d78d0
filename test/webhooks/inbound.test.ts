/**
 * Inbound webhooks: receivers CRUD, and POST /api/webhooks/inbound/{key}
 * (and the /api/webhooks/{key} alias) verifying `Service-Signature` over the
 * raw bytes. Signatures are made independently with the `stripe` package's
 * test header generator (same `t=,v1=` HMAC-SHA256 scheme).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { bootstrapProject, Client, type Reply } from '../support/client.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';
import { expectError, expectStatus, type Json } from '../support/expect.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;
const now = (): number => Math.floor(Date.now() / 1000);

const sign = (payload: string, secret = SECRET, timestamp = now()): string =>
  stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

forEachBackend('inbound webhooks', (backend: Backend) => {
  let server: TestServer;
  let client: Client;
  let anon: Client;
  let receiver: Json;
  const replies: Reply[] = [];

  const deliver = async (path: string, payload: string, signature: string | null): Promise<Reply> => {
    const r = await anon.post(path, payload, signature === null ? {} : { 'service-signature': signature });
    replies.push(r);
    return r;
  };
  const inbound = (): string => `/api/webhooks/inbound/${receiver.publicReceiverKey as string}`;

  /** Events of one type in the project log, waiting (up to 10 s) until at least `count` arrived; count 0 reads once. */
  const eventsOfType = async (type: string, count: number): Promise<Json[]> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await client.get(`/api/events?pageSize=200&filter=${encodeURIComponent(JSON.stringify({ type }))}`);
      expectStatus(r, 200);
      const events = r.body.data as Json[];
      if (events.length >= count || Date.now() > deadline) return events;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  before(async () => {
    server = await startServer({ backend });
    const p = await bootstrapProject(server.url, server.adminToken, `w${randomUUID().slice(0, 8)}`);
    client = p.client;
    anon = new Client(server.url);
    const r = await client.post('/api/webhooks/receivers', { name: 'payments', signingSecret: SECRET });
    replies.push(r);
    expectStatus(r, 201);
    receiver = r.body.data;
  });
  after(async () => {
    await server?.close();
  });

  it('creates, lists, reads and updates receivers without ever returning the secret', async () => {
    assert.match(receiver.publicReceiverKey, /^whr_[A-Za-z0-9_-]{32}$/);
    assert.equal(typeof receiver.signingSecretRef, 'string');
    assert.equal(receiver.name, 'payments');
    const listed = await client.get('/api/webhooks/receivers');
    replies.push(listed);
    expectStatus(listed, 200);
    assert.deepEqual((listed.body.data as Json[]).map((x) => x.id), [receiver.id]);
    const read = await client.get(`/api/webhooks/receivers/${receiver.id as string}`);
    replies.push(read);
    expectStatus(read, 200);
    assert.equal(read.body.data.publicReceiverKey, receiver.publicReceiverKey);
    const other = await client.post('/api/webhooks/receivers', { name: 'other', signingSecret: `${SECRET}-other` });
    replies.push(other);
    expectStatus(other, 201);
    assert.notEqual(other.body.data.publicReceiverKey, receiver.publicReceiverKey);
    const renamed = await client.put(`/api/webhooks/receivers/${other.body.data.id as string}`, { name: 'renamed' });
    replies.push(renamed);
    expectStatus(renamed, 200);
    assert.equal(renamed.body.data.name, 'renamed');
    expectStatus(await client.delete(`/api/webhooks/receivers/${other.body.data.id as string}`), 204);
    expectError(await client.get(`/api/webhooks/receivers/${other.body.data.id as string}`), 404, 'NOT_FOUND', 'Webhook.ReceiverNotFound');
    expectError(await client.post('/api/webhooks/receivers', { name: 'weak', signingSecret: 'short' }), 422, 'VALIDATION_FAILED', 'Webhook.InvalidSigningSecret', 'signingSecret');
    // A null secret is none given (it answered 500 once): generated on create, kept on update.
    const nulled = await client.post('/api/webhooks/receivers', { name: 'nulled', signingSecret: null });
    expectStatus(nulled, 201);
    assert.equal(typeof nulled.body.data.revealTokenId, 'string');
    const kept = await client.put(`/api/webhooks/receivers/${nulled.body.data.id as string}`, { signingSecret: null });
    expectStatus(kept, 200);
    assert.equal(kept.body.data.signingSecretRef, nulled.body.data.signingSecretRef);
    expectStatus(await client.delete(`/api/webhooks/receivers/${nulled.body.data.id as string}`), 204);
    // Management routes need the bearer.
    expectError(await anon.with({ tenant: client.scope.tenant!, project: client.scope.project! }).get('/api/webhooks/receivers'), 401, 'UNAUTHORIZED', 'Auth.MissingBearer');
  });

  it('generates a secret when none is given, revealed once through CredentialReveal', async () => {
    const created = await client.post('/api/webhooks/receivers', { name: 'generated' });
    replies.push(created);
    expectStatus(created, 201);
    const tokenId = created.body.data.revealTokenId as string;
    assert.equal(typeof tokenId, 'string');
    assert.equal(receiver.revealTokenId, undefined);
    const reveal = await client.post(`/api/CredentialReveal/${tokenId}/reveal`);
    expectStatus(reveal, 200);
    const secret = reveal.body.data.secret as string;
    assert.ok(secret.length >= 32);
    assert.ok(!created.text.includes(secret));
    expectStatus(await client.post(`/api/CredentialReveal/${tokenId}/reveal`), 404);
    const payload = JSON.stringify({ type: 'ping', id: 'gen-1', data: {} });
    const path = `/api/webhooks/inbound/${created.body.data.publicReceiverKey as string}`;
    expectStatus(await deliver(path, payload, sign(payload, secret)), 202);
    expectError(await deliver(path, payload, sign(payload)), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectStatus(await client.delete(`/api/webhooks/receivers/${created.body.data.id as string}`), 204);
  });

  it('accepts a signed delivery with 202 and records it once in the event log, deduped by id', async () => {
    const type = `invoice.paid${randomUUID().slice(0, 4)}`;
    const payload = JSON.stringify({ type, id: `evt_${randomUUID()}`, data: { amount: 42 } });
    const first = await deliver(inbound(), payload, sign(payload));
    expectStatus(first, 202);
    assert.equal(first.body.data.duplicate, false);
    assert.equal(typeof first.body.data.receiptId, 'string');
    assert.equal(typeof first.body.data.eventId, 'string');
    // The same external id again (re-signed, through the alias): still 202, the same receipt and event.
    const again = await deliver(`/api/webhooks/${receiver.publicReceiverKey as string}`, payload, sign(payload));
    expectStatus(again, 202);
    assert.equal(again.body.data.duplicate, true);
    assert.equal(again.body.data.receiptId, first.body.data.receiptId);
    assert.equal(again.body.data.eventId, first.body.data.eventId);
    const events = await eventsOfType(`webhook.inbound.${type}`, 1);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.id, first.body.data.eventId);
    assert.equal(events[0]!.data.entityId, first.body.data.receiptId);
    // Settle: a second event would have arrived by now if the duplicate had written one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await eventsOfType(`webhook.inbound.${type}`, 0)).length, 1);
  });

  it('refuses tampered bodies, wrong secrets, stale timestamps and missing signatures with 401', async () => {
    const payload = JSON.stringify({ type: 'invoice.paid', id: `evt_${randomUUID()}`, data: { amount: 1 } });
    const tampered = payload.replace('"amount":1', '"amount":1000');
    expectError(await deliver(inbound(), tampered, sign(payload)), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectError(await deliver(inbound(), payload, sign(payload, `${SECRET}x`)), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectError(await deliver(inbound(), payload, sign(payload, SECRET, now() - 301)), 401, 'UNAUTHORIZED', 'Webhook.SignatureExpired');
    expectError(await deliver(inbound(), payload, sign(payload, SECRET, now() + 400)), 401, 'UNAUTHORIZED', 'Webhook.SignatureExpired');
    expectError(await deliver(inbound(), payload, null), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectError(await deliver(inbound(), payload, 't=abc,v1=zz'), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    // Within tolerance, and one of several v1 values matching (secret rotation on the sender's side), is fine.
    const good = sign(payload, SECRET, now() - 200);
    const rotated = `${good.split(',')[0]!},v1=${'0'.repeat(64)},${good.split(',')[1]!}`;
    expectStatus(await deliver(inbound(), payload, rotated), 202);
  });

  it('answers 422 for malformed JSON with a valid signature, and 404 for an unknown key', async () => {
    const bad = '{"type":"x","id":';
    expectError(await deliver(inbound(), bad, sign(bad)), 422, 'VALIDATION_FAILED', 'Webhook.MalformedPayload');
    // A signed payload whose data holds U+0000 (jsonb refuses it) or a lone surrogate: 422 naming it, never a 500.
    const nul = JSON.stringify({ type: 'x', id: 'nul-1', data: { note: 'a\u0000b' } });
    expectError(await deliver(inbound(), nul, sign(nul)), 422, 'VALIDATION_FAILED', 'Request.NulCharacter', 'data.note');
    const lone = JSON.stringify({ type: 'x', id: 'lone-1', data: ['\ud800'] });
    expectError(await deliver(inbound(), lone, sign(lone)), 422, 'VALIDATION_FAILED', 'Request.LoneSurrogate', 'data[0]');
    const noId = JSON.stringify({ type: 'x', data: {} });
    expectError(await deliver(inbound(), noId, sign(noId)), 422, 'VALIDATION_FAILED', 'Webhook.InvalidId', 'id');
    const payload = JSON.stringify({ type: 'x', id: '1', data: {} });
    expectError(await deliver(`/api/webhooks/inbound/whr_${'A'.repeat(32)}`, payload, sign(payload)), 404, 'NOT_FOUND', 'Webhook.ReceiverNotFound');
    expectError(await deliver('/api/webhooks/inbound/nope', payload, sign(payload)), 404, 'NOT_FOUND', 'Webhook.ReceiverNotFound');
    // The alias does not shadow the management routes.
    const listed = await client.get('/api/webhooks/receivers');
    expectStatus(listed, 200);
    for (const path of ['/api/webhooks/endpoints', '/api/webhooks/receivers']) {
      const r = await client.post(path, {});
      assert.notEqual(r.body?.error?.reasonCode, 'Webhook.ReceiverNotFound', `${path} was taken for a receiver key`);
    }
    const diag = await client.get('/api/webhooks/diagnostics');
    replies.push(diag);
    expectStatus(diag, 200);
    assert.equal(diag.body.data.counts.receivers.total, 1);
    assert.ok(diag.body.data.counts.receipts.total >= 2);
    assert.ok((diag.body.data.lastErrors as Json[]).some((e) => e.reasonCode === 'Webhook.SignatureInvalid'));
  });

  it('keeps receiver secrets only in the platform secret store, encrypted, and drops the old one on rotation', async () => {
    const db = server.node.services.db;
    const row = (await db.query<{ secret_id: string | null; sealed_secret: string | null; signing_secret_ref: string; project_id: string }>(
      `SELECT secret_id, sealed_secret, signing_secret_ref, project_id FROM plinth.webhook_receivers WHERE id = $1`, [receiver.id],
    )).rows[0]!;
    assert.equal(row.sealed_secret, null);
    assert.equal(typeof row.secret_id, 'string');
    assert.equal(row.signing_secret_ref, row.secret_id);
    assert.equal(receiver.signingSecretRef, row.secret_id);
    const stored = (await db.query<{ project_id: string }>(`SELECT project_id FROM plinth.secrets WHERE id = $1`, [row.secret_id])).rows;
    assert.deepEqual(stored.map((x) => x.project_id), [row.project_id]);
    const rotating = await client.post('/api/webhooks/receivers', { name: 'rotating', signingSecret: `${SECRET}-old` });
    replies.push(rotating);
    expectStatus(rotating, 201);
    const rotated = await client.put(`/api/webhooks/receivers/${rotating.body.data.id as string}`, { signingSecret: `${SECRET}-new` });
    replies.push(rotated);
    expectStatus(rotated, 200);
    assert.notEqual(rotated.body.data.signingSecretRef, rotating.body.data.signingSecretRef);
    assert.equal((await db.query(`SELECT 1 FROM plinth.secrets WHERE id = $1`, [rotating.body.data.signingSecretRef])).rows.length, 0);
    const payload = JSON.stringify({ type: 'ping', id: 'rot-1', data: {} });
    const path = `/api/webhooks/inbound/${rotating.body.data.publicReceiverKey as string}`;
    expectError(await deliver(path, payload, sign(payload, `${SECRET}-old`)), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectStatus(await deliver(path, payload, sign(payload, `${SECRET}-new`)), 202);
    const everything = JSON.stringify([
      (await db.query(`SELECT * FROM plinth.webhook_receivers`)).rows,
      (await db.query(`SELECT * FROM plinth.secrets`)).rows,
    ]);
    assert.ok(!everything.includes(SECRET), 'a receiver secret is stored in clear');
    expectStatus(await client.delete(`/api/webhooks/receivers/${rotating.body.data.id as string}`), 204);
    assert.equal((await db.query(`SELECT 1 FROM plinth.secrets WHERE id = $1`, [rotated.body.data.signingSecretRef])).rows.length, 0);
  });

  it('refuses deliveries to a receiver left in the retired receiver-sealed format until a new secret is set', async () => {
    const db = server.node.services.db;
    const id = randomUUID();
    const key = `whr_${randomUUID().replace(/-/g, '')}`;
    const scope = (await db.query<{ tenant_id: string; project_id: string }>(`SELECT tenant_id, project_id FROM plinth.webhook_receivers WHERE id = $1`, [receiver.id])).rows[0]!;
    await db.query(
      `INSERT INTO plinth.webhook_receivers (id, tenant_id, project_id, name, public_key, secret_id, sealed_secret, signing_secret_ref)
       VALUES ($1, $2, $3, 'legacy', $4, NULL, 'v1.AAAA.AAAA.AAAA', $5)`,
      [id, scope.tenant_id, scope.project_id, key, `secret:webhook-receiver/${id}/000000000000`],
    );
    const path = `/api/webhooks/inbound/${key}`;
    const payload = JSON.stringify({ type: 'ping', id: 'legacy-1', data: {} });
    expectError(await deliver(path, payload, sign(payload)), 409, 'CONFLICT', 'Webhook.ReceiverSecretOutdated');
    const renamed = await client.put(`/api/webhooks/receivers/${id}`, { name: 'legacy-renamed' });
    replies.push(renamed);
    expectStatus(renamed, 200);
    expectError(await deliver(path, payload, sign(payload)), 409, 'CONFLICT', 'Webhook.ReceiverSecretOutdated');
    const repaired = await client.put(`/api/webhooks/receivers/${id}`, { signingSecret: `${SECRET}-legacy` });
    replies.push(repaired);
    expectStatus(repaired, 200);
    const row = (await db.query<{ secret_id: string | null; sealed_secret: string | null }>(`SELECT secret_id, sealed_secret FROM plinth.webhook_receivers WHERE id = $1`, [id])).rows[0]!;
    assert.equal(row.sealed_secret, null);
    assert.equal(row.secret_id, repaired.body.data.signingSecretRef);
    expectError(await deliver(path, payload, sign(payload)), 401, 'UNAUTHORIZED', 'Webhook.SignatureInvalid');
    expectStatus(await deliver(path, payload, sign(payload, `${SECRET}-legacy`)), 202);
    expectStatus(await client.delete(`/api/webhooks/receivers/${id}`), 204);
  });

  it('never returns a signing secret in any response', () => {
    assert.ok(replies.length > 10);
    for (const r of replies) {
      assert.ok(!r.text.includes(SECRET), `a response carried the secret: ${r.text.slice(0, 200)}`);
      assert.ok(!/"signingSecret"\s*:/.test(r.text), 'a response carried a signingSecret field');
    }
  });
});
