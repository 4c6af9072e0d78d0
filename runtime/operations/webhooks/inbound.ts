import { notFound, ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import { meterQueuedRuns } from '../../scheduling/run-usage.js';
import {
  acceptInbound, createReceiver, deleteReceiver, listReceivers, PUBLIC_KEY_RE, readReceiver, receiverByPublicKey, receiverSecret, toRecord, updateReceiver, type ReceiverRow,
} from '../../webhooks/inbound/store.js';
import { verifySignature } from '../../webhooks/inbound/signature.js';
import { noContent, single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { generateSecret, type SecretStore } from '../../secrets/index.js';
import { INBOUND_SCHEMAS as S } from './inbound-schemas.js';
import { ADMIN_ERRORS, webhookOp, WEBHOOKS_TAG } from './webhook-op.js';
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
const SIGNED = 'Same signature scheme as outbound deliveries. See docs/webhooks-inbound.md. 401 `Webhook.SignatureInvalid`/`Webhook.SignatureExpired`; 404 unknown key; 422 malformed payload; a repeated `id` answers 202 with `duplicate: true`.';

const receive: DeclaredSpec = {
  id: 'Webhooks.Inbound.Receive',
  authn: 'public',
  scope: 'none',
  grants: noGrants,
  rawBody: true,
  requestHeaders: ['service-signature'],
  contract: {
    tag: WEBHOOKS_TAG,
    summary: 'Deliver a signed message to a receiver (public; no bearer)',
    description: SIGNED,
    // Literal segments are tried before parameters, so the alias never shadows a `webhooks/<name>` route.
    routes: [{ method: 'POST', path: 'webhooks/inbound/:publicReceiverKey' }, { method: 'POST', path: 'webhooks/:publicReceiverKey', summary: 'Alias of `/webhooks/inbound/{publicReceiverKey}`' }],
    params: { publicReceiverKey: { description: 'The receiver\'s `publicReceiverKey`.', schema: { type: 'string', pattern: '^whr_[A-Za-z0-9_-]{32}$' } } },
    headers: { 'Service-Signature': { description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (several `v1` allowed; `t` within ±300 s).', required: true } },
    // The bytes are verified before they are parsed: the schema documents the message, parseMessage checks it.
    rawBodyMediaType: 'application/json', rawBodySchema: S.InboundWebhookMessage,
    output: { status: 202, body: S.InboundReceipt },
    errors: [401, 404, 413, 422],
    metering: { unit: 'none', why: 'an inbound message records one event; receipts count toward no windowed quota' },
    stability: 'stable',
  },
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
    if (accepted.runsQueued.length > 0) {
      meterQueuedRuns(ctx.services.usage, accepted.runsQueued);
      ctx.services.scheduling?.kick();
    }
    const { runsQueued: _runs, ...receipt } = accepted;
    return single(ctx, receipt, 202);
  },
};

const BY_RECEIVER_ID = { id: { description: 'Webhook receiver id.', schema: { type: 'string', format: 'uuid' } } };
const RECEIVER_REASONS = { prefix: 'Webhook' };

/** A secret given in a body: null or absent means none (generate on create, keep on update). */
const givenSecret = (v: string | null | undefined): string | undefined => (v === null || v === undefined ? undefined : checkSecret(v));

export const INBOUND_WEBHOOK_SPECS = {
  list: webhookOp('Webhooks.Receivers.List', {
    summary: 'List the project\'s inbound webhook receivers', routes: [{ method: 'GET', path: 'webhooks/receivers' }],
    output: { status: 200, body: S.WebhookReceiverList },
  }, async (ctx) => single(ctx, (await listReceivers(ctx.services.db, ctx.scope!.project.id)).map(toRecord))),
  create: webhookOp('Webhooks.Receivers.Create', {
    summary: 'Create an inbound webhook receiver (generated secret: one-time reveal via `revealTokenId`)', routes: [{ method: 'POST', path: 'webhooks/receivers' }],
    body: S.WebhookReceiverInput, reasons: RECEIVER_REASONS,
    output: { status: 201, body: S.WebhookReceiverWithRevealSingle }, errors: [...ADMIN_ERRORS, 413],
  }, async (ctx) => {
    const b = ctx.inv.body as { name: string; signingSecret?: string | null };
    if (b.name.trim() === '') throw validationFailed('Webhook.InvalidName', 'name must not be empty', 'name');
    // A generated secret is handed out once through POST /api/CredentialReveal/{revealTokenId}/reveal.
    const supplied = givenSecret(b.signingSecret);
    const { row, revealTokenId } = await createReceiver(ctx.services.db, secretsOf(ctx), ctx.scope!.tenant.id, ctx.scope!.project.id, b.name, supplied ?? generateSecret(), supplied === undefined);
    return single(ctx, revealTokenId === null ? toRecord(row) : { ...toRecord(row), revealTokenId }, 201);
  }),
  read: webhookOp('Webhooks.Receivers.Read', {
    summary: 'Read an inbound webhook receiver', routes: [{ method: 'GET', path: 'webhooks/receivers/:id' }], params: BY_RECEIVER_ID,
    output: { status: 200, body: S.WebhookReceiverSingle },
  }, async (ctx) => single(ctx, toRecord(await requireReceiver(ctx)))),
  update: webhookOp('Webhooks.Receivers.Update', {
    summary: 'Rename a receiver or replace its signing secret', routes: [{ method: 'PUT', path: 'webhooks/receivers/:id' }], params: BY_RECEIVER_ID,
    body: S.WebhookReceiverUpdate, reasons: RECEIVER_REASONS,
    output: { status: 200, body: S.WebhookReceiverSingle }, errors: [...ADMIN_ERRORS, 413],
  }, async (ctx) => {
    const r = await requireReceiver(ctx);
    const b = ctx.inv.body as { name?: string; signingSecret?: string | null };
    if (b.name !== undefined && b.name.trim() === '') throw validationFailed('Webhook.InvalidName', 'name must not be empty', 'name');
    const patch: { name?: string; signingSecret?: string } = {};
    if (b.name !== undefined) patch.name = b.name;
    const secret = givenSecret(b.signingSecret);
    if (secret !== undefined) patch.signingSecret = secret;
    const row = await updateReceiver(ctx.services.db, secretsOf(ctx), r, patch);
    if (row === null) throw notFound('Webhook.ReceiverNotFound', 'receiver not found');
    return single(ctx, toRecord(row));
  }),
  delete: webhookOp('Webhooks.Receivers.Delete', {
    summary: 'Delete an inbound webhook receiver', routes: [{ method: 'DELETE', path: 'webhooks/receivers/:id' }], params: BY_RECEIVER_ID,
    output: { status: 204 },
  }, async (ctx) => {
    const r = await requireReceiver(ctx);
    if (!(await deleteReceiver(ctx.services.db, r))) throw notFound('Webhook.ReceiverNotFound', 'receiver not found');
    return noContent;
  }),
  receive,
};
