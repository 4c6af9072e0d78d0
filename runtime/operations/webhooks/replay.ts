import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { readEvent } from '../../events/event-store.js';
import { deliveryPayload } from '../../webhooks/outbound/delivery.js';
import { readBody } from '../control/body.js';
import { noGrants, type OperationContext, type OperationSpec, type Result } from '../types.js';
import { deliveryRecord, scheduleDelivery, UUID, type DeliveryRow, DCOLS } from './outbound.js';

const S = PLATFORM_SCHEMA;

/** 202 with the replay result both flat (spec: `{ replayId, eventId, state }`) and in the `data` envelope. */
function scheduled(ctx: OperationContext, eventId: string, delivery: Record<string, unknown>): Result {
  const r = { replayId: randomUUID(), eventId, state: 'scheduled' };
  ctx.services.log.info('webhook replay scheduled', { correlationId: ctx.inv.correlationId, replayId: r.replayId, eventId, deliveryId: delivery.id });
  return { status: 202, body: { ...r, data: { ...r, delivery }, meta: { correlationId: ctx.inv.correlationId } } };
}

export const REPLAY_SPECS = {
  /** `POST /api/webhooks/deliveries/{deliveryId}/replay`: one more attempt of the same (endpoint, event). */
  delivery: { id: 'Webhooks.Deliveries.Replay', authn: 'admin', scope: 'project', grants: noGrants, execute: async (ctx) => {
    const id = ctx.inv.params.deliveryId ?? '';
    const d = UUID.test(id)
      ? (await ctx.services.db.query<DeliveryRow & { payload: unknown }>(`SELECT ${DCOLS}, payload FROM ${S}.webhook_deliveries WHERE id = $1 AND project_id = $2`, [id, ctx.scope!.project.id])).rows[0]
      : undefined;
    if (d === undefined) throw notFound('Webhook.DeliveryNotFound', 'webhook delivery not found');
    const row = await scheduleDelivery(ctx, d.endpoint_id, { id: d.event_id, type: d.event_type, payload: d.payload });
    return scheduled(ctx, d.event_id, deliveryRecord(row));
  } } satisfies OperationSpec,

  /** `POST /api/events/{id}/replay` `{ target: "webhook:<endpointId>", reason }`. */
  event: { id: 'Events.Replay', authn: 'admin', scope: 'project', grants: noGrants, execute: async (ctx) => {
    const body = readBody<{ target: string; reason?: string }>(ctx.inv.body, { target: 'string', reason: 'string?' }, 'Replay');
    const m = /^webhook:([0-9a-f-]{36})$/i.exec(body.target);
    if (m === null || !UUID.test(m[1]!)) throw validationFailed('Replay.InvalidTarget', "target must be 'webhook:<endpointId>'", 'target');
    const id = ctx.inv.params.id ?? '';
    const e = UUID.test(id) ? await readEvent(ctx.services.db, ctx.scope!.project.id, id) : null;
    if (e === null) throw notFound('Event.NotFound', 'event not found');
    const ep = (await ctx.services.db.query(`SELECT id FROM ${S}.webhook_endpoints WHERE id = $1 AND project_id = $2`, [m[1], ctx.scope!.project.id])).rows[0];
    if (ep === undefined) throw notFound('Webhook.EndpointNotFound', 'webhook endpoint not found');
    const row = await scheduleDelivery(ctx, m[1]!, { id: e.id, type: e.type, payload: deliveryPayload(e) });
    return scheduled(ctx, e.id, deliveryRecord(row));
  } } satisfies OperationSpec,
};
