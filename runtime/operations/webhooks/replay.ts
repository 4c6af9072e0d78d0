import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { readEvent } from '../../events/event-store.js';
import { deliveryPayload } from '../../webhooks/outbound/delivery.js';
import { type OperationContext, type Result } from '../types.js';
import type { MeteringDecl } from '../contract/index.js';
import { BY_EVENT_ID, eventsOp } from '../control/events.js';
import { deliveryRecord, scheduleDelivery, UUID, type DeliveryRow, DCOLS } from './outbound.js';
import { OUTBOUND_SCHEMAS as O } from './outbound-schemas.js';
import { ADMIN_ERRORS, underBothBases, webhookOp } from './webhook-op.js';

const S = PLATFORM_SCHEMA;

/** 202 with the replay result both flat (spec: `{ replayId, eventId, state }`) and in the `data` envelope. */
function scheduled(ctx: OperationContext, eventId: string, delivery: Record<string, unknown>): Result {
  const r = { replayId: randomUUID(), eventId, state: 'scheduled' };
  ctx.services.log.info('webhook replay scheduled', { correlationId: ctx.inv.correlationId, replayId: r.replayId, eventId, deliveryId: delivery.id });
  return { status: 202, body: { ...r, data: { ...r, delivery }, meta: { correlationId: ctx.inv.correlationId } } };
}

/** A replay schedules a delivery; the dispatcher counts it toward `webhook.deliveries.monthly` when it sends it, not the request. */
const REPLAY_METERING: MeteringDecl = { unit: 'none', why: 'the scheduled delivery is counted by the dispatcher when it is sent' };
const DELIVERY_REPLAY = 'One more attempt of a delivery (same event id, fresh retry budget); 409 while an attempt is in flight';
const EVENT_REPLAY = 'Send an event to a webhook endpoint again (creates the delivery when the endpoint never had it)';

export const REPLAY_SPECS = {
  /** `POST /api/webhooks/deliveries/{deliveryId}/replay`: one more attempt of the same (endpoint, event). */
  delivery: webhookOp('Webhooks.Deliveries.Replay', {
    summary: DELIVERY_REPLAY, routes: underBothBases('POST', 'deliveries/:deliveryId/replay', DELIVERY_REPLAY),
    params: { deliveryId: { description: 'Webhook delivery id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 202, body: O.ReplayAccepted }, errors: [...ADMIN_ERRORS, 409], metering: REPLAY_METERING,
  }, async (ctx) => {
    const id = ctx.inv.params.deliveryId ?? '';
    const d = UUID.test(id)
      ? (await ctx.services.db.query<DeliveryRow & { payload: unknown }>(`SELECT ${DCOLS}, payload FROM ${S}.webhook_deliveries WHERE id = $1 AND project_id = $2`, [id, ctx.scope!.project.id])).rows[0]
      : undefined;
    if (d === undefined) throw notFound('Webhook.DeliveryNotFound', 'webhook delivery not found');
    const row = await scheduleDelivery(ctx, d.endpoint_id, { id: d.event_id, type: d.event_type, payload: d.payload });
    return scheduled(ctx, d.event_id, deliveryRecord(row));
  }),

  /** `POST /api/events/{id}/replay` `{ target: "webhook:<endpointId>", reason }`. */
  event: eventsOp('Events.Replay', {
    summary: EVENT_REPLAY,
    routes: [{ method: 'POST', path: 'events/:id/replay' }, { method: 'POST', path: 'Event/:id/replay', summary: `${EVENT_REPLAY} (same as \`POST /events/{id}/replay\`)` }],
    params: BY_EVENT_ID, body: O.EventReplayInput, reasons: { prefix: 'Replay' },
    output: { status: 202, body: O.ReplayAccepted }, errors: [...ADMIN_ERRORS, 409, 413], metering: REPLAY_METERING,
  }, async (ctx) => {
    const body = ctx.inv.body as { target: string; reason?: string | null };
    // The schema checks the shape; the target's form has its own reason code.
    const m = /^webhook:([0-9a-f-]{36})$/i.exec(body.target);
    if (m === null || !UUID.test(m[1]!)) throw validationFailed('Replay.InvalidTarget', "target must be 'webhook:<endpointId>'", 'target');
    const id = ctx.inv.params.id ?? '';
    const e = UUID.test(id) ? await readEvent(ctx.services.db, ctx.scope!.project.id, id) : null;
    if (e === null) throw notFound('Event.NotFound', 'event not found');
    const ep = (await ctx.services.db.query(`SELECT id FROM ${S}.webhook_endpoints WHERE id = $1 AND project_id = $2`, [m[1], ctx.scope!.project.id])).rows[0];
    if (ep === undefined) throw notFound('Webhook.EndpointNotFound', 'webhook endpoint not found');
    const row = await scheduleDelivery(ctx, m[1]!, { id: e.id, type: e.type, payload: deliveryPayload(e) });
    return scheduled(ctx, e.id, deliveryRecord(row));
  }),
};
