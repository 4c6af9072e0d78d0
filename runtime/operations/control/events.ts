import { notFound, validationFailed } from '../../errors/service-error.js';
import { listEvents, parseEventFilter, readEvent } from '../../events/event-store.js';
import { SqlEventTail } from '../../events/event-tail.js';
import { list, single } from '../envelopes.js';
import { noGrants, type OperationSpec } from '../types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The event log of a project. Admin only: events name every row id of the
 * project, so reading them is broader than any entity grant.
 */
const eventsOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

function cursorSeq(text: string | undefined): string | null {
  if (text === undefined || text === '') return null;
  const seq = Buffer.from(text, 'base64url').toString('utf8');
  // 19 digits can still pass bigint's maximum, which would fail in SQL as a 500.
  if (!/^e\d{1,19}$/.test(seq) || BigInt(seq.slice(1)) > 9223372036854775807n) throw validationFailed('Query.InvalidCursor', 'cursor is malformed', 'cursor');
  return seq.slice(1);
}

export const EVENT_SPECS = {
  list: eventsOp('Events.List', async (ctx) => {
    const q = ctx.inv.query;
    const sizeText = q.get('pageSize') ?? '50';
    if (!/^\d{1,4}$/.test(sizeText) || Number(sizeText) < 1) throw validationFailed('Query.InvalidPageSize', 'pageSize must be a positive integer', 'pageSize');
    const pageSize = Number(sizeText);
    if (pageSize > ctx.services.limits.maxPageSize) throw validationFailed('Query.PageSizeTooLarge', `pageSize must be at most ${ctx.services.limits.maxPageSize}`, 'pageSize');
    const res = await listEvents(ctx.services.db, ctx.scope!.project.id, { ...parseEventFilter(q.get('filter')), afterSeq: cursorSeq(q.get('cursor')), pageSize });
    return list(ctx, res.events, {
      number: 1, size: pageSize,
      ...(res.more && res.lastSeq !== null ? { next: Buffer.from(`e${res.lastSeq}`).toString('base64url') } : {}),
    });
  }),
  /**
   * SSE: `event: service.event`, `id:` a resumable position, `data:` the
   * envelope. Starts at the current end of the log, or after `Last-Event-ID`
   * (header, or `lastEventId` in the query for clients that cannot set it).
   */
  tail: eventsOp('Events.Tail', async (ctx) => {
    const scope = { tenantId: ctx.scope!.tenant.id, projectId: ctx.scope!.project.id };
    const source = ctx.services.eventTail ?? new SqlEventTail(ctx.services.db);
    const given = ctx.inv.lastEventId ?? ctx.inv.query.get('lastEventId') ?? null;
    const after = await source.start(scope, given === null || given === '' ? null : given);
    const log = ctx.services.log;
    const correlationId = ctx.inv.correlationId;
    return {
      status: 200,
      body: undefined,
      stream: {
        open: (sink) => source.follow(scope, after, {
          event: (position, e) => {
            sink.send('service.event', JSON.stringify(e), position);
          },
          error: (err) => {
            log.warn('event tail source failed; ending the stream', { correlationId, error: err instanceof Error ? err.message : String(err) });
            sink.end();
          },
        }),
      },
    };
  }),
  read: eventsOp('Events.Read', async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    const e = UUID.test(id) ? await readEvent(ctx.services.db, ctx.scope!.project.id, id) : null;
    if (e === null) throw notFound('Event.NotFound', 'event not found');
    return single(ctx, e);
  }),
};
