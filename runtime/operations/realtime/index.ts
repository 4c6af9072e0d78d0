import { notFound, ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import { toErrorEnvelope } from '../../errors/envelope.js';
import { filterTarget } from '../../entities/list.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { requestFilterGrants, type FilterInput } from '../../filter/grants.js';
import { parseFilter, parseFilterText } from '../../filter/parse.js';
import { filterToSql, SqlParams } from '../../filter/to-sql.js';
import type { PreparedSubscription, RealtimeHub, RowCheck } from '../../realtime/hub.js';
import { mintSubscriptionToken } from '../../realtime/subscription-token.js';
import { connectionOwner, grantsChangedError, ownerEndedError, projectConnections, sessionConnections } from '../../realtime/session-connections.js';
import { single } from '../envelopes.js';
import { streamActorOf } from '../../streams/stream-slots.js';
import { reserveSlot, subscriptionQuotas } from './subscription-quota.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import type { MeteringDecl, ParamDecl, TagDecl } from '../contract/index.js';
import { schemaRef } from '../../publication/openapi-components.js';
import { REALTIME_SCHEMAS as S } from './realtime-schemas.js';

const hubOf = (ctx: OperationContext): RealtimeHub => {
  const hub = ctx.services.realtime;
  if (hub === undefined) throw notFound('Route.Unknown', 'realtime is not enabled on this node');
  return hub;
};

/** The entity a realtime request names (`body.entity` over WebSocket, `?entity=` for SSE). */
function entityName(ctx: OperationContext): unknown {
  if (ctx.inv.query.has('entity')) return ctx.inv.query.get('entity');
  const b = ctx.inv.body as { entity?: unknown } | null | undefined;
  return typeof b === 'object' && b !== null ? b.entity : undefined;
}

function entityOf(ctx: OperationContext): CompiledEntity | undefined {
  const name = entityName(ctx);
  return typeof name === 'string' ? ctx.scope?.publication.entities.get(name) : undefined;
}

/** The subscription's filter: `?filter=` text for SSE, `filter` of the message (decoded JSON) over WebSocket. */
function filterInput(ctx: OperationContext): FilterInput | null {
  if (ctx.inv.query.has('filter')) {
    const text = ctx.inv.query.get('filter')!;
    return text === '' ? null : { text };
  }
  const raw = typeof ctx.inv.body === 'object' && ctx.inv.body !== null ? (ctx.inv.body as { filter?: unknown }).filter : undefined;
  return raw === undefined || raw === null ? null : { raw };
}

/**
 * Reading changes of E needs what reading E needs: `entity:<E>:read`, plus
 * read on every related entity the filter reaches (a filtered subscription
 * reveals, change by change, whether the related row matches), exactly as a
 * REST list with that filter (checked by stage 4).
 */
const readGrant = (ctx: OperationContext): readonly string[] => {
  const e = entityOf(ctx);
  if (e === undefined) return [];
  return [...new Set([`entity:${e.entityName}:read`, ...requestFilterGrants(e, filterInput(ctx))])];
};

/** Parses the filter against the entity and compiles the row check the hub runs per event. */
function prepare(ctx: OperationContext): PreparedSubscription {
  const name = entityName(ctx);
  if (typeof name !== 'string' || name === '') throw validationFailed('Realtime.EntityRequired', "'entity' is required", 'entity');
  const entity = entityOf(ctx);
  if (entity === undefined) throw notFound('Realtime.UnknownEntity', `no entity named '${name}' in this project`);
  const input = filterInput(ctx);
  const node = input === null ? null : 'text' in input ? parseFilterText(input.text, entity) : parseFilter(input.raw, entity);
  const policy = ctx.rowPolicy;
  if (policy !== null) {
    policy.requireLive(entity, 'read');
    policy.guardFilter(entity, node);
  }
  let check: RowCheck | null = null;
  // The server-side filter is the request filter ANDed with the caller's read policy (`$actor` values bound now).
  const predicate = (into: SqlParams): string | null => {
    const parts: string[] = [];
    const rows = policy?.rowsSql(entity, 'read', 't', into) ?? null;
    if (rows !== null) parts.push(rows);
    if (node !== null) parts.push(filterToSql(node, entity.entityName, 't', policy === null ? filterTarget(entity) : policy.target(entity), into));
    return parts.length === 0 ? null : parts.join(' AND ');
  };
  // Compiled once here for its identity; the hub re-numbers it into each batched query.
  const params = new SqlParams();
  const cond = predicate(params);
  if (cond !== null) {
    check = {
      key: `${entity.table}\u0000${cond}\u0000${JSON.stringify(params.values)}`,
      table: entity.table, live: entity.liveClause, paramCount: params.values.length,
      predicate: (into) => predicate(into)!,
    };
  }
  const scope = ctx.scope!;
  const masked = policy === null ? [] : policy.read(entity).masked;
  return {
    tenantId: scope.tenant.id, projectId: scope.project.id, branch: scope.branch, entity: entity.entityName, actor: actorOf(ctx), check,
    ...(policy === null ? {} : { policy: { masked } }),
  };
}

/** Who a subscription counts against per actor: a user subject; the platform admin is not limited per actor. */
const actorOf = (ctx: OperationContext): string | null => streamActorOf(ctx.actor);

const REALTIME_TAG: TagDecl = { name: 'Realtime', description: 'Row change subscriptions over WebSocket or SSE (docs/realtime.md).' };
/** Open subscriptions are bounded (the `realtime.subscriptions` quota, a concurrency bound), not counted per call. */
const SUBSCRIPTIONS_BOUNDED: MeteringDecl = { unit: 'none', why: 'open subscriptions are bounded by the realtime.subscriptions quota, not counted per call' };
const param = (description: string, schema: Record<string, unknown> = { type: 'string' }, required = false): ParamDecl => ({ description, schema, ...(required ? { required } : {}) });

/**
 * Realtime operations. Every one runs through dispatch(): authentication,
 * scope, grants and audit are the same as REST's. `subscribe` is a WebSocket,
 * GraphQL or gRPC message, not a route: it has no contract.
 */
export const REALTIME_SPECS: { connect: DeclaredSpec; subscribe: OperationSpec; sse: DeclaredSpec; token: DeclaredSpec } = {
  /**
   * WebSocket handshake: a credential for the project, and a free subscription slot.
   * Served by the realtime adapter (adapters/realtime/upgrade.ts), not the REST route table.
   */
  connect: {
    id: 'Realtime.Connect', authn: 'user', scope: 'project', grants: noGrants,
    contract: {
      tag: REALTIME_TAG,
      summary: 'Open a realtime WebSocket (row change subscriptions)',
      description: 'A WebSocket endpoint, not a request/response operation: the message protocol (`subscribe`, `unsubscribe`, `ping`; `subscribed`, `change`, `error`, `pong`) is in docs/realtime.md. ' +
        'Credential: `Authorization: Bearer`, a `bearer.<token>` WebSocket protocol, or `access_token`; a subscription token from `POST /realtime/token` also works. ' +
        'Authentication, scope and the subscription quota are checked before the upgrade and answered as plain JSON errors.',
      routes: [{ method: 'GET', path: 'realtime' }],
      // The scope may come from the query or a subscription token: any credential alone, and optional scope headers.
      security: 'any-credential',
      headers: {
        Upgrade: param('WebSocket handshake.', { type: 'string', const: 'websocket' }, true),
        'Sec-WebSocket-Protocol': param('May offer `bearer.<token>` as the credential (the server echoes it).'),
        'X-Service-Tenant': param('Tenant slug or id (or the `tenant` query; a subscription token fixes it).'),
        'X-Service-Project': param('Project slug or id (or the `project` query; a subscription token fixes it).'),
      },
      query: {
        access_token: param('Credential for clients that cannot set headers (prefer a subscription token from `POST /realtime/token`).'),
        tenant: param('Tenant, when the header cannot be set.'),
        project: param('Project, when the header cannot be set.'),
        branch: param('Branch, when the header cannot be set.'),
      },
      sharedParams: ['BranchHeader'],
      output: { status: 101, upgrade: true },
      errors: [401, 403, 404, 422, 429],
      metering: SUBSCRIPTIONS_BOUNDED, stability: 'stable',
    },
    execute: async (ctx) => {
      const loaded = subscriptionQuotas(ctx);
      hubOf(ctx).checkQuota(ctx.scope!.project.id, actorOf(ctx), loaded instanceof Promise ? await loaded : loaded);
      // owner: the adapter closes the connection when that session is revoked (or that API key deleted).
      return { status: 200, body: { tenantId: ctx.scope!.tenant.id, projectId: ctx.scope!.project.id, branch: ctx.scope!.branch, owner: connectionOwner(ctx.actor) } };
    },
  },
  /** One `subscribe` message: validates entity and filter, reserves a quota slot; the adapter attaches it (or releases the slot). */
  subscribe: {
    id: 'Realtime.Subscribe', authn: 'user', scope: 'project', grants: readGrant,
    execute: async (ctx) => {
      const prepared = prepare(ctx);
      await reserveSlot(ctx, hubOf(ctx), prepared);
      return { status: 200, body: prepared };
    },
  },
  /** `GET /api/realtime/sse?entity=…&filter=…`: one subscription as an SSE stream (`service.event`). */
  sse: {
    id: 'Realtime.Sse', authn: 'user', scope: 'project', grants: readGrant,
    contract: {
      tag: REALTIME_TAG,
      summary: 'Follow row changes of one entity as Server-Sent Events (one subscription per stream; no replay)',
      description: 'Needs `entity:<Entity>:read`. Past the project bound of open subscriptions (the `realtime.subscriptions` quota, else the node default): 429 `QUOTA_EXCEEDED` (`X-Service-Quota-Kind: realtime.subscriptions`).',
      routes: [{ method: 'GET', path: 'realtime/sse' }],
      query: {
        entity: param('Entity whose row changes to follow (needs `entity:<Entity>:read`).', { type: 'string', minLength: 1 }, true),
        filter: param('Entity filter JSON (as on list routes), evaluated server-side on the current row.', { type: 'string', contentMediaType: 'application/json', contentSchema: schemaRef('Filter') }),
        id: param('Subscription id echoed as `subscriptionId` (default `sse`).', { type: 'string', maxLength: 64 }),
      },
      output: { status: 200, sse: { event: 'service.event', data: S.RealtimeChange } },
      errors: [401, 403, 404, 422, 429],
      metering: SUBSCRIPTIONS_BOUNDED, stability: 'stable',
    },
    execute: async (ctx) => {
      const hub = hubOf(ctx);
      const prepared = prepare(ctx);
      await reserveSlot(ctx, hub, prepared);
      const id = ctx.inv.query.get('id') ?? 'sse';
      if (id.length > 64) {
        hub.release(prepared);
        throw validationFailed('Realtime.InvalidSubscriptionId', 'id is at most 64 characters', 'id');
      }
      let sink: { send(event: string, data: string): boolean } | null = null;
      let detach: (() => void) | null;
      try {
        detach = await hub.attach(prepared, id, { send: (m) => void sink?.send('service.event', m) });
      } catch (err) {
        throw err instanceof ServiceError ? err : new ServiceError('UNAVAILABLE', 'Realtime.FollowerUnavailable', 'the event log cannot be followed right now', {}, err);
      }
      // The adapter never opens the stream when the client left meanwhile: give the slot back then.
      const orphan = setTimeout(() => {
        if (sink === null) {
          detach?.();
          detach = null;
        }
      }, 10_000);
      orphan.unref();
      return {
        status: 200,
        body: undefined,
        stream: {
          open: (s) => {
            clearTimeout(orphan);
            sink = s;
            // The session's revocation (or the API key's deletion) ends the stream with a final `error` event.
            const owner = connectionOwner(ctx.actor);
            const untrack = sessionConnections.track(owner, () => {
              detach?.();
              detach = null;
              const revoked = ownerEndedError(owner!, 'stream');
              s.send('error', JSON.stringify(toErrorEnvelope(revoked, ctx.inv.correlationId, ctx.inv.basePath)));
              s.end();
            });
            // A grant change in the project ends the stream too: it was authorized under the grants of its time.
            const untrackProject = owner === null ? () => {} : projectConnections.track(ctx.scope!.project.id, () => {
              detach?.();
              detach = null;
              s.send('error', JSON.stringify(toErrorEnvelope(grantsChangedError('stream'), ctx.inv.correlationId, ctx.inv.basePath)));
              s.end();
            });
            return () => {
              untrack();
              untrackProject();
              sink = null;
              detach?.();
              detach = null;
            };
          },
        },
      };
    },
  },
  /** `POST /api/realtime/token`: a 60 s subscription token bound to this project (user or admin). */
  token: {
    id: 'Realtime.Token', authn: 'user', scope: 'project', grants: noGrants,
    contract: {
      tag: REALTIME_TAG,
      summary: 'Mint a 60 s subscription token for the realtime handshake (never a REST bearer)',
      routes: [{ method: 'POST', path: 'realtime/token' }],
      output: { status: 201, body: S.RealtimeToken },
      errors: [401, 403, 404, 422],
      metering: SUBSCRIPTIONS_BOUNDED, stability: 'stable',
    },
    execute: async (ctx) => {
      const t = await mintSubscriptionToken(ctx.services.db, ctx.scope!.tenant.id, ctx.scope!.project.id, ctx.actor);
      return single(ctx, t, 201);
    },
  },
};
