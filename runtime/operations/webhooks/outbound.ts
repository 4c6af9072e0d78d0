import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../../storage/index.js';
import { ServiceError, notFound, validationFailed } from '../../errors/service-error.js';
import { generateSecret } from '../../secrets/index.js';
import type { OutboundWebhooks } from '../../webhooks/outbound/dispatcher.js';
import { parseEndpointFilter, parseEventTypeFilter } from '../../webhooks/outbound/matching.js';
import { checkTarget, parseTargetUrl } from '../../webhooks/outbound/url-guard.js';
import { list, noContent, single } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

const S = PLATFORM_SCHEMA;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Retry policy bounds: maxAttempts 1..20 (default 10); baseDelaySeconds 0..3600, fractional allowed (default 1). */
export const RETRY_BOUNDS = { maxAttempts: { min: 1, max: 20, default: 10 }, baseDelaySeconds: { min: 0, max: 3600, default: 1 } } as const;

/** Management is platform-admin for now: endpoints hold signing secrets and see every event type of the project. */
const op = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

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

const FIELDS = ['url', 'description', 'eventTypeFilter', 'filter', 'retryPolicy', 'signingSecret'];

function readRetryPolicy(raw: unknown, prev: { maxAttempts: number; baseDelayMs: number } | null): { maxAttempts: number; baseDelayMs: number } {
  const base = prev ?? { maxAttempts: RETRY_BOUNDS.maxAttempts.default, baseDelayMs: RETRY_BOUNDS.baseDelaySeconds.default * 1000 };
  if (raw === undefined || raw === null) return base;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw validationFailed('Webhook.InvalidRetryPolicy', 'retryPolicy must be an object', 'retryPolicy');
  const p = raw as Record<string, unknown>;
  for (const k of Object.keys(p)) if (k !== 'maxAttempts' && k !== 'baseDelaySeconds') throw validationFailed('Webhook.InvalidRetryPolicy', `unknown retryPolicy property '${k}'`, `retryPolicy.${k}`);
  const out = { ...base };
  if (p.maxAttempts !== undefined) {
    const m = p.maxAttempts;
    if (typeof m !== 'number' || !Number.isInteger(m) || m < RETRY_BOUNDS.maxAttempts.min || m > RETRY_BOUNDS.maxAttempts.max) {
      throw validationFailed('Webhook.InvalidRetryPolicy', `retryPolicy.maxAttempts must be an integer ${RETRY_BOUNDS.maxAttempts.min}..${RETRY_BOUNDS.maxAttempts.max}`, 'retryPolicy.maxAttempts');
    }
    out.maxAttempts = m;
  }
  if (p.baseDelaySeconds !== undefined) {
    const d = p.baseDelaySeconds;
    if (typeof d !== 'number' || !Number.isFinite(d) || d < RETRY_BOUNDS.baseDelaySeconds.min || d > RETRY_BOUNDS.baseDelaySeconds.max) {
      throw validationFailed('Webhook.InvalidRetryPolicy', `retryPolicy.baseDelaySeconds must be a number ${RETRY_BOUNDS.baseDelaySeconds.min}..${RETRY_BOUNDS.baseDelaySeconds.max}`, 'retryPolicy.baseDelaySeconds');
    }
    out.baseDelayMs = Math.round(d * 1000);
  }
  return out;
}

/** Validates a create/replace body (or a patch merged over the current record). */
async function readEndpoint(ctx: OperationContext, body: unknown, prev: EndpointRow | null, patch: boolean): Promise<EndpointInput> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationFailed('Webhook.InvalidBody', 'body must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!FIELDS.includes(k)) throw validationFailed('Webhook.UnknownProperty', `unknown property '${k}'`, k);
  const keep = patch && prev !== null;
  const urlRaw = b.url === undefined && keep ? prev.url : b.url;
  if (typeof urlRaw !== 'string') throw validationFailed(urlRaw === undefined ? 'Webhook.MissingProperty' : 'Webhook.InvalidProperty', "'url' is required and must be a string", 'url');
  const url = parseTargetUrl(urlRaw);
  await checkTarget(url, webhooksOf(ctx).allowPrivateTargets);
  const description = b.description === undefined ? (keep ? prev.description : null) : b.description;
  if (description !== null && (typeof description !== 'string' || description.length > 1000)) throw validationFailed('Webhook.InvalidProperty', "'description' must be a string of at most 1000 characters", 'description');
  const eventTypeFilter = b.eventTypeFilter === undefined && keep ? prev.event_type_filter : parseEventTypeFilter(b.eventTypeFilter);
  const filter = b.filter === undefined && keep ? prev.filter : parseEndpointFilter(b.filter);
  const policy = readRetryPolicy(b.retryPolicy, keep ? { maxAttempts: prev.max_attempts, baseDelayMs: prev.base_delay_ms } : null);
  const secret = b.signingSecret;
  if (secret !== undefined && secret !== null && (typeof secret !== 'string' || secret.length < 16 || secret.length > 256)) {
    throw validationFailed('Webhook.InvalidProperty', "'signingSecret' must be a string of 16..256 characters", 'signingSecret');
  }
  return { url: url.toString(), description, eventTypeFilter, filter, maxAttempts: policy.maxAttempts, baseDelayMs: policy.baseDelayMs, signingSecret: typeof secret === 'string' ? secret : null };
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
  if (state !== undefined && !['Pending', 'Claimed', 'Succeeded', 'RetryScheduled', 'DeadLettered'].includes(state)) throw validationFailed('Webhook.InvalidState', 'state must be a delivery state', 'state');
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

export const OUTBOUND_WEBHOOK_SPECS = {
  list: op('Webhooks.Endpoints.List', async (ctx) => {
    const rows = (await ctx.services.db.query<EndpointRow>(`SELECT ${COLS} FROM ${S}.webhook_endpoints WHERE project_id = $1 ORDER BY created_at, id`, [ctx.scope!.project.id])).rows;
    return list(ctx, rows.map(endpointRecord), { number: 1, size: rows.length, totalCount: rows.length });
  }),
  create: op('Webhooks.Endpoints.Create', async (ctx) => {
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
  read: op('Webhooks.Endpoints.Read', async (ctx) => single(ctx, endpointRecord(await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id)))),
  replace: op('Webhooks.Endpoints.Update', (ctx) => update(ctx, false)),
  patch: op('Webhooks.Endpoints.Patch', (ctx) => update(ctx, true)),
  delete: op('Webhooks.Endpoints.Delete', async (ctx) => {
    const ep = await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.id);
    await ctx.services.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM ${S}.webhook_endpoints WHERE id = $1`, [ep.id]);
      await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM ${S}.webhook_endpoints WHERE secret_id = $1)`, [ep.secret_id]);
    });
    return noContent;
  }),
  rotateSecret: op('Webhooks.Endpoints.RotateSecret', async (ctx) => {
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
  endpointDeliveries: op('Webhooks.Endpoints.Deliveries', async (ctx) => {
    const ep = await loadEndpoint(ctx.services.db, ctx.scope!.project.id, ctx.inv.params.endpointId);
    return listDeliveries(ctx, ep.id);
  }),
  deliveries: op('Webhooks.Deliveries.List', (ctx) => listDeliveries(ctx, null)),
  /** `POST /api/CredentialReveal/{revealTokenId}/reveal`: the generated secret, exactly once. */
  reveal: { id: 'CredentialReveal.Reveal', authn: 'admin', scope: 'none', grants: noGrants, execute: async (ctx) => {
    const id = ctx.inv.params.revealTokenId ?? '';
    const w = webhooksOf(ctx);
    const secret = UUID.test(id) ? await w.secrets.reveal(ctx.services.db, id) : null;
    if (secret === null) throw notFound('CredentialReveal.NotFound', 'reveal token not found, expired or already used');
    return single(ctx, { secret }, 200, { 'cache-control': 'no-store' });
  } } satisfies OperationSpec,
};

export { DCOLS, type DeliveryRow };
