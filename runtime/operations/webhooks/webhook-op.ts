import { CONTROL_PLANE_UNMETERED, type HttpMethod, type OperationContract, type RouteDecl, type TagDecl } from '../contract/index.js';
import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';

export const WEBHOOKS_TAG: TagDecl = { name: 'Webhooks', description: 'Outbound webhook endpoints and deliveries, replay, inbound receivers (docs/webhooks.md, docs/webhooks-inbound.md).' };

/** Scope resolution (404), missing scope headers or a bad query/body (422); 503 (default) when the feature is not running on the node. */
export const ADMIN_ERRORS: readonly number[] = [401, 403, 404, 422];

type WebhookContract = Omit<OperationContract, 'tag' | 'metering' | 'stability' | 'errors'> & Partial<Pick<OperationContract, 'errors' | 'metering'>>;

/**
 * Webhook management: platform admin, project from the scope headers
 * (endpoints and receivers hold signing secrets and see every event type of
 * the project). Management calls count toward no quota; deliveries are
 * counted by the dispatcher when it sends them (docs/webhooks.md).
 */
export const webhookOp = (id: string, contract: WebhookContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: WEBHOOKS_TAG, errors: ADMIN_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** The outbound routes are served under `webhooks/` and its `Webhook/` alias (the spec's resource name): both routes of one operation. */
export const underBothBases = (method: HttpMethod, tail: string, summary: string): readonly [RouteDecl, RouteDecl] => [
  { method, path: `webhooks/${tail}` },
  { method, path: `Webhook/${tail}`, summary: `${summary} (same as \`${method} /webhooks/${tail.replace(/:(\w+)/g, '{$1}')}\`)` },
];
