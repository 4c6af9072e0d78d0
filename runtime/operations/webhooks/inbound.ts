import { notFound, ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import {
  acceptInbound, createReceiver, deleteReceiver, listReceivers, PUBLIC_KEY_RE, readReceiver, receiverByPublicKey, receiverSecret, toRecord, updateReceiver, type ReceiverRow,
} from '../../webhooks/inbound/store.js';
import { verifySignature } from '../../webhooks/inbound/signature.js';
import { noContent, single } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { generateSecret, type SecretStore } from '../../secrets/index.js';
import { readBody } from '../control/body.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../json-depth.js';
import { refuseUnstorableIn } from '../../storable-text.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TYPE_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The platform secret store (Services.webhooks.secrets): receivers keep their secrets nowhere else, so without it the routes answer 503. */
function secretsOf(ctx: OperationContext): SecretStore {
  const secrets = ctx.services.webhooks?.secrets;
  if (secrets === undefined) throw new ServiceError('UNAVAILABLE', 'Webhook.Unavailable', 'the platform secret store is not running on this node');
  return secrets;
}

const adminOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

function checkSecret(secret: string): string {
  if (secret.length < 16) throw validationFailed('Webhook.InvalidSigningSecret', 'signingSecret must be at least 16 characters', 'signingSecret');
  return secret;
}

async function requireReceiver(ctx: OperationContext): Promise<ReceiverRow> {
  const id = ctx.inv.params.id ?? '';
  const r = UUID.test(id) ? await readReceiver(ctx.services.db, ctx.scope!.project.id, id) : null;
  if (r === null) throw notFound('Webhook.ReceiverNotFound', 'receiver not found');
  return r;
}

const signatureInvalid = (): ServiceError => unauthorized('Webhook.SignatureInvalid', 'the Service-Signature header does not match this request');

/** Parses `{ type, id, data }` once the signature matched. Anything else is 422. */
function parseMessage(raw: Buffer): { type: string; externalId: string; data: unknown } {
  let value: unknown;
  try {
    const text = utf8.decode(raw);
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new Error('too deep');
    value = JSON.parse(text);
  } catch {
    throw validationFailed('Webhook.MalformedPayload', 'the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validationFailed('Webhook.MalformedPayload', 'the body must be a JSON object { type, id, data }');
  const v = value as Record<string, unknown>;
  if (typeof v.type !== 'string' || !TYPE_RE.test(v.type)) throw validationFailed('Webhook.InvalidType', "'type' must be a string of letters, digits, '_', '.', ':' or '-' (at most 200)", 'type');
  const id = typeof v.id === 'number' && Number.isSafeInteger(v.id) ? String(v.id) : v.id;
  if (typeof id !== 'string' || id.length === 0 || id.length > 200 || id.includes('\u0000')) throw validationFailed('Webhook.InvalidId', "'id' must be a non-empty string of at most 200 characters", 'id');
  // The raw body bypasses dispatch's input check: `data` is stored as jsonb.
  refuseUnstorableIn(v.data, 'data');
  return { type: v.type, externalId: id, data: v.data ?? null };
}

/**
 * Public inbound delivery: the raw bytes are verified against the receiver's
 * secret before anything is parsed. The receiver's project becomes the
 * request's scope (for audit) only after the key resolved.
 */
const receive = (id: string): OperationSpec => ({
  id,
  authn: 'public',
  scope: 'none',
  grants: noGrants,
  rawBody: true,
  requestHeaders: ['service-signature'],
  execute: async (ctx) => {
    const key = ctx.inv.params.publicReceiverKey ?? '';
    const r = PUBLIC_KEY_RE.test(key) ? await receiverByPublicKey(ctx.services.db, key) : null;
    if (r === null) throw notFound('Webhook.ReceiverNotFound', 'no receiver has this key');
    const tenant = await ctx.services.scopes.tenant(r.tenantId);
    const project = tenant === null ? null : await ctx.services.scopes.project(tenant.id, r.projectId);
    if (tenant === null || project === null) throw notFound('Webhook.ReceiverNotFound', 'no receiver has this key');
    const publication = await ctx.services.publications.current(tenant.id, project.id, 'main');
    ctx.scope = { tenant, project, branch: 'main', publication };
    const raw = ctx.inv.rawBody ?? Buffer.alloc(0);
    const check = verifySignature(ctx.inv.headers?.['service-signature'] ?? '', await receiverSecret(ctx.services.db, secretsOf(ctx), r), raw);
    if (check === 'invalid') throw signatureInvalid();
    if (check === 'expired') throw unauthorized('Webhook.SignatureExpired', 'the Service-Signature timestamp is outside the allowed tolerance');
    const m = parseMessage(raw);
    const accepted = await acceptInbound(ctx.services.db, r, {
      type: m.type, externalId: m.externalId, payload: m.data, correlationId: ctx.inv.correlationId, branch: 'main', publicationVersion: publication.version,
    });
    if (!accepted.duplicate) ctx.services.outbox.kick();
    return single(ctx, accepted, 202);
  },
});

export const INBOUND_WEBHOOK_SPECS = {
  list: adminOp('Webhooks.Receivers.List', async (ctx) => single(ctx, (await listReceivers(ctx.services.db, ctx.scope!.project.id)).map(toRecord))),
  create: adminOp('Webhooks.Receivers.Create', async (ctx) => {
    const b = readBody<{ name: string; signingSecret?: string }>(ctx.inv.body, { name: 'string', signingSecret: 'string?' }, 'Webhook');
    if (b.name.trim() === '') throw validationFailed('Webhook.InvalidName', 'name must not be empty', 'name');
    // A generated secret is handed out once through POST /api/CredentialReveal/{revealTokenId}/reveal.
    const generated = b.signingSecret === undefined;
    const { row, revealTokenId } = await createReceiver(ctx.services.db, secretsOf(ctx), ctx.scope!.tenant.id, ctx.scope!.project.id, b.name, generated ? generateSecret() : checkSecret(b.signingSecret!), generated);
    return single(ctx, revealTokenId === null ? toRecord(row) : { ...toRecord(row), revealTokenId }, 201);
  }),
  read: adminOp('Webhooks.Receivers.Read', async (ctx) => single(ctx, toRecord(await requireReceiver(ctx)))),
  update: adminOp('Webhooks.Receivers.Update', async (ctx) => {
    const r = await requireReceiver(ctx);
    const b = readBody<{ name?: string; signingSecret?: string }>(ctx.inv.body, { name: 'string?', signingSecret: 'string?' }, 'Webhook');
    if (b.name !== undefined && b.name.trim() === '') throw validationFailed('Webhook.InvalidName', 'name must not be empty', 'name');
    const patch: { name?: string; signingSecret?: string } = {};
    if (b.name !== undefined) patch.name = b.name;
    if (b.signingSecret !== undefined) patch.signingSecret = checkSecret(b.signingSecret);
    const row = await updateReceiver(ctx.services.db, secretsOf(ctx), r, patch);
    if (row === null) throw notFound('Webhook.ReceiverNotFound', 'receiver not found');
    return single(ctx, toRecord(row));
  }),
  delete: adminOp('Webhooks.Receivers.Delete', async (ctx) => {
    const r = await requireReceiver(ctx);
    if (!(await deleteReceiver(ctx.services.db, r))) throw notFound('Webhook.ReceiverNotFound', 'receiver not found');
    return noContent;
  }),
  receive: receive('Webhooks.Inbound.Receive'),
  receiveAlias: receive('Webhooks.Inbound.Receive'),
};
