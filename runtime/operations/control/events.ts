import { notFound } from '../../errors/service-error.js';
import { listEvents, parseEventFilter, readEvent } from '../../events/event-store.js';
import { SqlEventTail } from '../../events/event-tail.js';
import { list, single } from '../envelopes.js';
import { slottedStream } from '../../streams/slotted-stream.js';
import { decodeSeqCursor, encodeSeqCursor, logPageSize } from '../log-paging.js';
import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, type OperationContract, type TagDecl } from '../contract/index.js';
import { EVENT_FILTER, EVENT_SCHEMAS as S, LAST_EVENT_ID_HEADER, LAST_EVENT_ID_QUERY } from './event-schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const EVENTS_TAG: TagDecl = { name: 'Events', description: 'The project\'s event log.' };

type EventContract = Omit<OperationContract, 'tag' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'metering'>>;

/**
 * The event log of a project. Admin only: events name every row id of the
 * project, so reading them is broader than any entity grant.
 */
export const eventsOp = (id: string, contract: EventContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: EVENTS_TAG, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

export const BY_EVENT_ID = { id: { description: 'Event id.' } };
const LIST = 'Page through the event log';
const READ = 'Read one event';

export const EVENT_SPECS = {
  list: eventsOp('Events.List', {
    summary: LIST,
    routes: [{ method: 'GET', path: 'events' }, { method: 'GET', path: 'Event', summary: `${LIST} (same as \`GET /events\`)` }],
    query: {
      filter: {
        description: 'Event filter JSON (`type`, `entity`, `since`, `until`, `correlationId`).',
        schema: { type: 'string', contentMediaType: 'application/json', contentSchema: EVENT_FILTER },
      },
    },
    sharedParams: ['PageSize', 'Cursor'],
    output: { status: 200, body: S.EventList },
    errors: [400, 401, 403, 422, 429],
  }, async (ctx) => {
    const q = ctx.inv.query;
    const pageSize = logPageSize(ctx);
    const res = await listEvents(ctx.services.db, ctx.scope!.project.id, { ...parseEventFilter(q.get('filter')), afterSeq: decodeSeqCursor(q.get('cursor'), 'e'), pageSize });
    return list(ctx, res.events, {
      number: 1, size: pageSize,
      ...(res.more && res.lastSeq !== null ? { next: encodeSeqCursor('e', res.lastSeq) } : {}),
    });
  }),
  /**
   * SSE: `event: service.event`, `id:` a resumable position, `data:` the
   * envelope. Starts at the current end of the log, or after `Last-Event-ID`
   * (header, or `lastEventId` in the query for clients that cannot set it).
   */
  tail: eventsOp('Events.Tail', {
    summary: 'Follow the event log as Server-Sent Events (`event: service.event`, `data`: the event envelope; resume with Last-Event-ID)',
    routes: [{ method: 'GET', path: 'events/tail' }],
    headers: LAST_EVENT_ID_HEADER, query: LAST_EVENT_ID_QUERY,
    output: { status: 200, sse: { event: 'service.event', data: S.Event } },
    errors: [401, 403, 422],
  }, async (ctx) => {
    const scope = { tenantId: ctx.scope!.tenant.id, projectId: ctx.scope!.project.id };
    const source = ctx.services.eventTail ?? new SqlEventTail(ctx.services.db);
    const given = ctx.inv.lastEventId ?? ctx.inv.query.get('lastEventId') ?? null;
    const log = ctx.services.log;
    const correlationId = ctx.inv.correlationId;
    // A long-lived stream: it holds one of the node's stream slots until it ends (docs/events.md "Tail").
    const stream = await slottedStream(ctx, async () => {
      const after = await source.start(scope, given === null || given === '' ? null : given);
      return {
        open: (sink) => source.follow(scope, after, {
          event: (position, e) => {
            sink.send('service.event', JSON.stringify(e), position);
          },
          error: (err) => {
            log.warn('event tail source failed; ending the stream', { correlationId, error: err instanceof Error ? err.message : String(err) });
            sink.end();
          },
        }),
      };
    });
    return { status: 200, body: undefined, stream };
  }),
  read: eventsOp('Events.Read', {
    summary: READ,
    routes: [{ method: 'GET', path: 'events/:id' }, { method: 'GET', path: 'Event/:id', summary: `${READ} (same as \`GET /events/{id}\`)` }],
    params: BY_EVENT_ID,
    output: { status: 200, body: S.EventSingle },
    errors: [400, 401, 403, 404],
  }, async (ctx) => {
    const id = ctx.inv.params.id ?? '';
    const e = UUID.test(id) ? await readEvent(ctx.services.db, ctx.scope!.project.id, id) : null;
    if (e === null) throw notFound('Event.NotFound', 'event not found');
    return single(ctx, e);
  }),
};
