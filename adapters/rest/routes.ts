import { ENTITY_SPECS } from '../../runtime/operations/entity/index.js';
import { EVENT_SPECS } from '../../runtime/operations/control/events.js';
import { REALTIME_SPECS } from '../../runtime/operations/realtime/index.js';
import { AUDIT_SPECS } from '../../runtime/operations/control/audit.js';
import { INBOUND_WEBHOOK_SPECS } from '../../runtime/operations/webhooks/inbound.js';
import { WEBHOOK_DIAGNOSTICS_SPECS } from '../../runtime/operations/webhooks/diagnostics.js';
import { OUTBOUND_WEBHOOK_SPECS as OW } from '../../runtime/operations/webhooks/outbound.js';
import { REPLAY_SPECS } from '../../runtime/operations/webhooks/replay.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A fixed route: path segments after the base, `:name` captures a parameter. */
export interface StaticRoute {
  method: Method;
  path: string;
  spec: OperationSpec;
}

/** Outbound webhooks' routes, as tails under each of WEBHOOK_BASES: one list, so `/api/Webhook` cannot drift from `/api/webhooks`. */
const OUTBOUND_WEBHOOK_ROUTES: ReadonlyArray<{ method: Method; tail: string; spec: OperationSpec }> = [
  { method: 'GET', tail: 'endpoints', spec: OW.list },
  { method: 'POST', tail: 'endpoints', spec: OW.create },
  { method: 'GET', tail: 'endpoints/:id', spec: OW.read },
  { method: 'PUT', tail: 'endpoints/:id', spec: OW.replace },
  { method: 'PATCH', tail: 'endpoints/:id', spec: OW.patch },
  { method: 'DELETE', tail: 'endpoints/:id', spec: OW.delete },
  { method: 'POST', tail: 'endpoints/:id/rotate-secret', spec: OW.rotateSecret },
  { method: 'GET', tail: 'endpoints/:endpointId/deliveries', spec: OW.endpointDeliveries },
  { method: 'GET', tail: 'deliveries', spec: OW.deliveries },
  { method: 'POST', tail: 'deliveries/:deliveryId/replay', spec: REPLAY_SPECS.delivery },
];
/** `webhooks` and its `Webhook` alias (the spec's resource name). */
const WEBHOOK_BASES = ['webhooks', 'Webhook'] as const;

/** The routes of declared operations, as their contracts name them (runtime/operations/catalog.ts). */
const DECLARED_ROUTES: StaticRoute[] = PLATFORM_OPERATIONS.flatMap((spec) => spec.contract.routes.map((r) => ({ method: r.method, path: r.path, spec })));

/**
 * Every non-entity REST route of the platform. Entity routes are resolved by shape in router.ts.
 * Routes still written here belong to operations not yet declared with a contract (issue 23).
 */
export const STATIC_ROUTES: StaticRoute[] = [
  ...DECLARED_ROUTES,



  { method: 'GET', path: 'events', spec: EVENT_SPECS.list },
  { method: 'GET', path: 'Event', spec: EVENT_SPECS.list },
  // Before events/:id: static segments are matched in order.
  { method: 'GET', path: 'events/tail', spec: EVENT_SPECS.tail },
  { method: 'GET', path: 'events/:id', spec: EVENT_SPECS.read },
  { method: 'GET', path: 'Event/:id', spec: EVENT_SPECS.read },
  { method: 'POST', path: 'events/:id/replay', spec: REPLAY_SPECS.event },
  { method: 'POST', path: 'Event/:id/replay', spec: REPLAY_SPECS.event },

  ...WEBHOOK_BASES.flatMap((base) => OUTBOUND_WEBHOOK_ROUTES.map((r) => ({ method: r.method, path: `${base}/${r.tail}`, spec: r.spec }))),
  { method: 'POST', path: 'CredentialReveal/:revealTokenId/reveal', spec: OW.reveal },





  { method: 'GET', path: 'realtime/sse', spec: REALTIME_SPECS.sse },
  { method: 'POST', path: 'realtime/token', spec: REALTIME_SPECS.token },

  { method: 'GET', path: 'audit', spec: AUDIT_SPECS.list },
  { method: 'GET', path: 'audit/tail', spec: AUDIT_SPECS.tail },

  { method: 'GET', path: 'webhooks/receivers', spec: INBOUND_WEBHOOK_SPECS.list },
  { method: 'POST', path: 'webhooks/receivers', spec: INBOUND_WEBHOOK_SPECS.create },
  { method: 'GET', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.read },
  { method: 'PUT', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.update },
  { method: 'DELETE', path: 'webhooks/receivers/:id', spec: INBOUND_WEBHOOK_SPECS.delete },
  { method: 'GET', path: 'webhooks/diagnostics', spec: WEBHOOK_DIAGNOSTICS_SPECS.diagnostics },
  // Public: signature-verified over the raw body, no bearer.
  { method: 'POST', path: 'webhooks/inbound/:publicReceiverKey', spec: INBOUND_WEBHOOK_SPECS.receive },
];

// router.ts tries literal segments before parameters, so this alias never shadows `webhooks/<name>` routes.
STATIC_ROUTES.push({ method: 'POST', path: 'webhooks/:publicReceiverKey', spec: INBOUND_WEBHOOK_SPECS.receiveAlias });

/** Two routes with one method and path would leave one unreachable: refused when the table loads. */
const seen = new Set<string>();
for (const r of STATIC_ROUTES) {
  const key = `${r.method} ${r.path.replace(/:\w+/g, ':')}`;
  if (seen.has(key)) throw new Error(`route ${r.method} ${r.path} is declared twice`);
  seen.add(key);
}

export { ENTITY_SPECS };
