import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import { ServiceError, notFound, validationFailed } from '../../errors/service-error.js';
import { generateSecret } from '../../secrets/index.js';
import type { OutboundWebhooks } from '../../webhooks/outbound/dispatcher.js';
import { parseEndpointFilter, parseEventTypeFilter } from '../../webhooks/outbound/matching.js';
import { checkTarget, parseTargetUrl } from '../../webhooks/outbound/url-guard.js';
import { list, noContent, single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { CONTROL_PLANE_UNMETERED, type ReasonDecl } from '../contract/index.js';
import { OUTBOUND_SCHEMAS as O, DELIVERY_STATES } from './outbound-schemas.js';
import { ADMIN_ERRORS, underBothBases, webhookOp, WEBHOOKS_TAG } from './webhook-op.js';

const S = PLATFORM_SCHEMA;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Retry policy bounds: maxAttempts 1..20 (default 10); baseDelaySeconds 0..3600, fractional allowed (default 1). */
export const RETRY_BOUNDS = { maxAttempts: { min: 1, max: 20, default: 10 }, baseDelaySeconds: { min: 0, max: 3600, default: 1 } } as const;

export function webhooksOf(ctx: OperationContext): OutboundWebhooks {
  const w = ctx.services.webhooks;
  if (w === undefined) throw new ServiceError('UNAVAILABLE', 'Webhook.Unavailable', 'outbound webhooks are not running on this node');
  return w;
}

interface EndpointRow {
  id: string; url: string; description: string | null; event_type_filter: string | null; filter: unknown;
  max_attempts: number; base_delay_ms: number; secret_id: string; created_at: string; updated_at: string;
}

const COLS = 'id, url, description, event_type_filter, filter, max_attempts, base_delay_ms, secret_id, created_at, updated_at';

const iso = (v: unknown): string => new Date(v as string).toISOString();

export const endpointRecord = (r: EndpointRow): Record<string, unknown> => ({
  id: r.id,
  url: r.url,
  description: r.description,
  eventTypeFilter: r.event_type_filter,
  filter: r.filter,
  retryPolicy: { maxAttempts: r.max_attempts, baseDelaySeconds: r.base_delay_ms / 1000 },
  signingSecretRef: `secret:${r.secret_id}`,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

interface EndpointInput {
  url: string;
  description: string | null;
  eventTypeFilter: string | null;
  filter: unknown;
  maxAttempts: number;
  baseDelayMs: number;
  signingSecret: string | null;
}

/**
 * Reason codes of an endpoint body's 422s (validated against WebhookEndpointInput/Patch
 * before the handler): a field with a parser of its own keeps that parser's reason.
 */
const ENDPOINT_REASONS: ReasonDecl = {
  prefix: 'Webhook',
  fields: { eventTypeFilter: 'Webhook.InvalidEventTypeFilter', filter: 'Webhook.InvalidFilter', retryPolicy: 'Webhook.InvalidRetryPolicy' },
};

interface EndpointBody {
  url?: string; description?: string | null; eventTypeFilter?: string | null; filter?: unknown;
  retryPolicy?: { maxAttempts?: number; baseDelaySeconds?: number } | null; signingSecret?: string | null;
}

/** The policy over the previous one (or the defaults); its bounds are the schema's, unknown keys are refused here (the schema leaves them open). */
function readRetryPolicy(raw: EndpointBody['retryPolicy'], prev: { maxAttempts: number; baseDelayMs: number } | null): { maxAttempts: number; baseDelayMs: number } {
  const base = prev ?? { maxAttempts: RETRY_BOUNDS.maxAttempts.default, baseDelayMs: RETRY_BOUNDS.baseDelaySeconds.default * 1000 };
  if (raw === undefined || raw === null) return base;
  for (const k of Object.keys(raw)) if (k !== 'maxAttempts' && k !== 'baseDelaySeconds') throw validationFailed('Webhook.InvalidRetryPolicy', `unknown retryPolicy property '${k}'`, `retryPolicy.${k}`);
  return {
    maxAttempts: raw.maxAttempts ?? base.maxAttempts,
    baseDelayMs: raw.baseDelaySeconds === undefined ? base.baseDelayMs : Math.round(raw.baseDelaySeconds * 1000),
  };
}

/** A create/replace body (or a patch merged over the current record), once its schema matched: the URL guard and the filter parsers remain. */
async function readEndpoint(ctx: OperationContext, body: unknown, prev: EndpointRow | null, patch: boolean): Promise<EndpointInput> {
  const b = body as EndpointBody;
  const keep = patch && prev !== null;
  const url = parseTargetUrl(b.url === undefined && keep ? prev.url : b.url!);
  await checkTarget(url, webhooksOf(ctx).allowPrivateTargets);
  const description = b.description === undefined ? (keep ? prev.description : null) : b.description;
  const eventTypeFilter = b.eventTypeFilter === undefined && keep ? prev.event_type_filter : parseEventTypeFilter(b.eventTypeFilter);
  const filter = b.filter === undefined && keep ? prev.filter : parseEndpointFilter(b.filter);
  const policy = readRetryPolicy(b.retryPolicy, keep ? { maxAttempts: prev.max_attempts, baseDelayMs: prev.base_delay_ms } : null);
  const secret = b.signingSecret ?? null;
  return { url: url.toString(), description, eventTypeFilter, filter, maxAttempts: policy.maxAttempts, baseDelayMs: policy.baseDelayMs, signingSecret: secret };
}

async function loadEndpoint(db: SqlExecutor, projectId: string, id: string | undefined, lock = false): Promise<EndpointRow> {
  const row = id !== undefined && UUID.test(id)
    ? (await db.query<EndpointRow>(`SELECT ${COLS} FROM ${S}.webhook_endpoints WHERE id = $1 AND project_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, projectId])).rows[0]
    : undefined;
  if (row === undefined) throw notFound('Webhook.EndpointNotFound', 'webhook endpoint not found');
  return row;
}

/** A generated secret is handed out once through a reveal token; a supplied one is only stored. */
async function storeSecret(ctx: OperationContext, tx: SqlExecutor, supplied: string | null): Promise<{ secretId: string; revealTokenId: string | null }> {
  const w = webhooksOf(ctx);
  const secretId = await w.secrets.put(tx, ctx.scope!.project.id, supplied ?? generateSecret());
  return { secretId, revealTokenId: supplied === null ? await w.secrets.revealToken(tx, secretId) : null };
}

const withReveal = (rec: Record<string, unknown>, revealTokenId: string | null): Record<string, unknown> => (revealTokenId === null ? rec : { ...rec, revealTokenId });

async function update(ctx: OperationContext, patch: boolean) {
  const projectId = ctx.scope!.project.id;
  const prev = await loadEndpoint(ctx.services.db, projectId, ctx.inv.params.id);
  const input = await readEndpoint(ctx, ctx.inv.body, prev, patch);
  const { row, revealTokenId } = await ctx.services.db.transaction(async (tx) => {
    let secretId = prev.secret_id;
    let revealTokenId: string | null = null;
    if (input.signingSecret !== null) ({ secretId, revealTokenId } = await storeSecret(ctx, tx, input.signingSecret));
    const row = (await tx.query<EndpointRow>(
      `UPDATE ${S}.webhook_endpoints SET url = $3, description = $4, event_type_filter = $5, filter = $6::jsonb, max_attempts = $7, base_delay_ms = $8, secret_id = $9, updated_at = now()
       WHERE id = $1 AND project_id = $2 RETURNING ${COLS}`,
      [prev.id, projectId, input.url, input.description, input.eventTypeFilter, input.filter === null ? null : JSON.stringify(input.filter), input.maxAttempts, input.baseDelayMs, secretId],
    )).rows[0];
    return { row, revealTokenId };
  });
  if (row === undefined) throw notFound('Webhook.EndpointNotFound', 'webhook endpoint not found');
  return single(ctx, withReveal(endpointRecord(row), revealTokenId));
}

interface DeliveryRow { id: string; endpoint_id: string; event_id: string; event_type: string; state: string; attempts: unknown[]; next_attempt_at: string; held_reason: string | null; created_at: string; updated_at: string }
const DCOLS = 'id, endpoint_id, event_id, event_type, state, attempts, next_attempt_at, held_reason, created_at, updated_at';

export const deliveryRecord = (r: DeliveryRow): Record<string, unknown> => ({
  id: r.id, endpointId: r.endpoint_id, eventId: r.event_id, eventType: r.event_type, state: r.state, attempts: r.attempts,
  nextAttemptAt: r.state === 'Pending' || r.state === 'RetryScheduled' ? iso(r.next_attempt_at) : null,
  // Present while a hard webhook.deliveries.monthly quota holds the delivery back (docs/webhooks.md).
  ...(r.held_reason === null || r.held_reason === undefined ? {} : { heldReason: r.held_reason }),
  createdAt: iso(r.created_at), updatedAt: iso(r.updated_at),
});

function pageSize(ctx: OperationContext): number {
  const text = ctx.inv.query.get('pageSize') ?? '50';
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > ctx.services.limits.maxPageSize) {
    throw validationFailed('Query.InvalidPageSize', `pageSize must be an integer 1..${ctx.services.limits.maxPageSize}`, 'pageSize');
  }
  return Number(text);
}

async function listDeliveries(ctx: OperationContext, endpointId: string | null) {
  const size = pageSize(ctx);
  const state = ctx.inv.query.get('state');
  if (state !== undefined && !DELIVERY_STATES.includes(state)) throw validationFailed('Webhook.InvalidState', 'state must be a delivery state', 'state');
  const rows = (await ctx.services.db.query<DeliveryRow>(
    `SELECT ${DCOLS} FROM ${S}.webhook_deliveries WHERE project_id = $1 AND ($2::uuid IS NULL OR endpoint_id = $2) AND ($3::text IS NULL OR state = $3)
     ORDER BY created_at DESC, id LIMIT ${size}`,
    [ctx.scope!.project.id, endpointId, state ?? null],
  )).rows;
  return list(ctx, rows.map(deliveryRecord), { number: 1, size });
}

/**
 * Schedules one more attempt of (endpoint, event), keeping the event identity:
 * creates the delivery when there is none, else makes it due now with a fresh
 * retry budget. A delivery whose attempt is in flight keeps its claim (409).
 */
export async function scheduleDelivery(ctx: OperationContext, endpointId: string, event: { id: string; type: string; payload: unknown }): Promise<DeliveryRow> {
  const row = (await ctx.services.db.query<DeliveryRow>(
    `INSERT INTO ${S}.webhook_deliveries AS d (id, project_id, endpoint_id, event_id, event_type, payload, state, attempt_limit)
     SELECT $1, $2, ep.id, $4, $5, $6::jsonb, 'Pending', ep.max_attempts FROM ${S}.webhook_endpoints ep WHERE ep.id = $3 AND ep.project_id = $2
     ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = 'Pending', next_attempt_at = now(), updated_at = now(), held_reason = NULL,
       attempt_limit = jsonb_array_length(d.attempts) + (SELECT max_attempts FROM ${S}.webhook_endpoints WHERE id = d.endpoint_id)
     WHERE d.state <> 'Claimed' OR d.claimed_until < now()
     RETURNING ${DCOLS}`,
    [randomUUID(), ctx.scope!.project.id, endpointId, event.id, event.type, JSON.stringify(event.payload)],
  )).rows[0];
  if (row === undefined) throw new ServiceError('CONFLICT', 'Webhook.DeliveryInFlight', 'an attempt of this delivery is in flight; replay it after it finishes');
  webhooksOf(ctx).kick();
  return row;
}

const BY_ENDPOINT_ID = { id: { description: 'Webhook endpoint id.', schema: { type: 'string', format: 'uuid' } } };
const DELIVERY_QUERY = { state: { description: 'Only deliveries in this state.', schema: { type: 'string', enum: DELIVERY_STATES } } };
const LIST = 'List the project\'s outbound webhook endpoints';
const CREATE = 'Create an outbound webhook endpoint';
const READ = 'Read an outbound webhook endpoint';
const REPLACE = 'Replace an outbound webhook endpoint (the secret is kept unless `signingSecret` is given)';
const PATCH = 'Merge-update an outbound webhook endpoint';
const DELETE = 'Delete an outbound webhook endpoint and its deliveries';
const ROTATE = 'Replace the signing secret with a generated one (one-time reveal via `revealTokenId`)';
const ENDPOINT_DELIVERIES = 'Deliveries of an endpoint, newest first';
const DELIVERIES = 'Recent deliveries of the project, newest first';

/** `/api/webhooks/…` and `/api/Webhook/…` (docs/webhooks.md). */
export const OUTBOUND_WEBHOOK_SPECS = {
  list: webhookOp('Webhooks.Endpoints.List', {
    summary: LIST, routes: underBothBases('GET', 'endpoints', LIST), output: { status: 200, body: O.WebhookEndpointList },
  }, async (ctx) => {
    const rows = (await ctx.services.db.query<EndpointRow>(`SELECT ${COLS} FROM ${S}.webhook_endpoints WHERE project_id = $1 ORDER BY created_at, id`, [ctx.scope!.project.id])).rows;
    return list(ctx, rows.map(endpointRecord), { number: 1, size: rows.length, totalCount: rows.length });
  }),
  create: webhookOp('Webhooks.Endpoints.Create', {
    summary: CREATE, routes: underBothBases('POST', 'endpoints', CREATE),
    description: 'Without `signingSecret` the platform generates one and the answer carries `revealTokenId` (see `/CredentialReveal/{revealTokenId}/reveal`).',
    body: O.WebhookEndpointInput, reasons: ENDPOINT_REASONS,
    output: { status: 201, body: O.WebhookEndpointWithRevealSingle }, errors: [...ADMIN_ERRORS, 413],
  }, async (ctx) => {
    const input = await readEndpoint(ctx, ctx.inv.body, null, false);
    const { row, revealTokenId } = await ctx.services.db.transaction(async (tx) => {
      const { secretId, revealTokenId } = await storeSecret(ctx, tx, input.signingSecret);
      const row = (await tx.query<EndpointRow>(
        `INSERT INTO ${S}.webhook_endpoints (id, tenant_id, project_id, url, description, event_type_filter, filter, max_attempts, base_delay_ms, secret_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10) RETURNING ${COLS}`,
        [randomUUID(), ctx.scope!.tenant.id, ctx.scope!.project.id, input.url, input.description, input.eventTypeFilter, input.filter === null ? null : JSON.stringify(input.filter), input.maxAttempts, input.baseDelayMs, secretId],
      )).rows[0]!;
      return { row, revealTokenId };
    });
    return single(ctx, withReveal(endpointRecord(row), revealTokenId), 201);
  }),
  read: webhookOp('Webhooks.Endpoints.Read', {
    summary: READ, routes: underBothBases('GET', 'endpoints/:id', READ), params: BY_ENDPOINT_ID, output: { status: 200, body: O.WebhookEndpointSingle },
  }, async (ctx) => single(ctx, endpointRecord(await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id)))),
  replace: webhookOp('Webhooks.Endpoints.Update', {
    summary: REPLACE, routes: underBothBases('PUT', 'endpoints/:id', REPLACE), params: BY_ENDPOINT_ID,
    body: O.WebhookEndpointInput, reasons: ENDPOINT_REASONS,
    output: { status: 200, body: O.WebhookEndpointWithRevealSingle }, errors: [...ADMIN_ERRORS, 413],
  }, (ctx) => update(ctx, false)),
  patch: webhookOp('Webhooks.Endpoints.Patch', {
    summary: PATCH, routes: underBothBases('PATCH', 'endpoints/:id', PATCH), params: BY_ENDPOINT_ID,
    body: O.WebhookEndpointPatch, reasons: ENDPOINT_REASONS,
    output: { status: 200, body: O.WebhookEndpointWithRevealSingle }, errors: [...ADMIN_ERRORS, 413],
  }, (ctx) => update(ctx, true)),
  delete: webhookOp('Webhooks.Endpoints.Delete', {
    summary: DELETE, routes: underBothBases('DELETE', 'endpoints/:id', DELETE), params: BY_ENDPOINT_ID, output: { status: 204 },
  }, async (ctx) => {
    const ep = await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id);
    await ctx.services.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM ${S}.webhook_endpoints WHERE id = $1`, [ep.id]);
      await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM ${S}.webhook_endpoints WHERE secret_id = $1)`, [ep.secret_id]);
    });
    return noContent;
  }),
  rotateSecret: webhookOp('Webhooks.Endpoints.RotateSecret', {
    summary: ROTATE, routes: underBothBases('POST', 'endpoints/:id/rotate-secret', ROTATE), params: BY_ENDPOINT_ID,
    output: { status: 200, body: O.WebhookEndpointWithRevealSingle },
  }, async (ctx) => {
    const projectId = ctx.scope!.project.id;
    const { row, revealTokenId } = await ctx.services.db.transaction(async (tx) => {
      const prev = await loadEndpoint(tx, projectId, ctx.inv.params.id, true);
      const { secretId, revealTokenId } = await storeSecret(ctx, tx, null);
      const row = (await tx.query<EndpointRow>(`UPDATE ${S}.webhook_endpoints SET secret_id = $2, updated_at = now() WHERE id = $1 RETURNING ${COLS}`, [prev.id, secretId])).rows[0]!;
      await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM ${S}.webhook_endpoints WHERE secret_id = $1)`, [prev.secret_id]);
      return { row, revealTokenId };
    });
    return single(ctx, withReveal(endpointRecord(row), revealTokenId));
  }),
  endpointDeliveries: webhookOp('Webhooks.Endpoints.Deliveries', {
    summary: ENDPOINT_DELIVERIES, routes: underBothBases('GET', 'endpoints/:endpointId/deliveries', ENDPOINT_DELIVERIES),
    params: { endpointId: BY_ENDPOINT_ID.id }, sharedParams: ['PageSize'], query: DELIVERY_QUERY,
    output: { status: 200, body: O.WebhookDeliveryList },
  }, async (ctx) => {
    const ep = await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.endpointId);
    return listDeliveries(ctx, ep.id);
  }),
  deliveries: webhookOp('Webhooks.Deliveries.List', {
    summary: DELIVERIES, routes: underBothBases('GET', 'deliveries', DELIVERIES), sharedParams: ['PageSize'], query: DELIVERY_QUERY,
    output: { status: 200, body: O.WebhookDeliveryList },
  }, (ctx) => listDeliveries(ctx, null)),
};

/** `POST /api/CredentialReveal/{revealTokenId}/reveal`: the generated secret, exactly once (platform admin; no project scope). */
export const CREDENTIAL_REVEAL_SPEC: DeclaredSpec = {
  id: 'CredentialReveal.Reveal', authn: 'admin', scope: 'none', grants: noGrants,
  contract: {
    tag: WEBHOOKS_TAG, summary: 'Reveal a platform-generated signing secret, exactly once',
    description: 'The one route that returns a secret. The token is deleted as it is read (and expires after 15 minutes unread): a second call answers 404 `CredentialReveal.NotFound`.',
    routes: [{ method: 'POST', path: 'CredentialReveal/:revealTokenId/reveal' }],
    params: { revealTokenId: { description: 'Reveal token id (`revealTokenId` of the create/rotate answer).', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 200, body: O.RevealedSecret, noStore: true }, errors: [401, 403, 404],
    metering: CONTROL_PLANE_UNMETERED, stability: 'stable',
  },
  execute: async (ctx) => {
    const id = ctx.inv.params.revealTokenId ?? '';
    const w = webhooksOf(ctx);
    const secret = UUID.test(id) ? await w.secrets.reveal(ctx.services.db, id) : null;
    if (secret === null) throw notFound('CredentialReveal.NotFound', 'reveal token not found, expired or already used');
    return single(ctx, { secret }, 200, { 'cache-control': 'no-store' });
  },
};

export { DCOLS, type DeliveryRow };
