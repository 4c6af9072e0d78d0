import { ServiceError, validationFailed } from '../errors/service-error.js';
import type { Page } from '../operations/envelopes.js';
import { REALTIME_SPECS } from '../operations/realtime/index.js';
import type { ChangeNotice, PreparedSubscription, RealtimeRecipient } from '../realtime/hub.js';
import { connectionOwner, grantsChangedError, ownerEndedError, projectConnections, sessionConnections } from '../realtime/session-connections.js';
import { decodeMessage, encodeMessage } from './decode.js';
import { dispatchEntity, Refused, type CallContext } from './entity-call.js';
import type { GrpcExchange, GrpcReply } from './exchange.js';
import { streamActorOf } from '../streams/stream-slots.js';
import { GRPC_METHOD_CAPABILITIES } from './names.js';
import { listArgsOf } from './unary.js';
import { bodyOfInput, messageOfRow, type Message } from './values.js';

/** StreamList's batch size when `page_size` is unset: invisible to the client, so the largest page. */
const STREAM_BATCH = 200;
/** Watch: changes queued past a full transport buffer before the call ends as a slow consumer. */
const MAX_WATCH_BACKLOG = 10_000;

const DONE: GrpcReply = { kind: 'done' };

/**
 * StreamList: every matching row in sort order, one List page at a time
 * through the keyset cursor. The call first takes one of the node's stream
 * slots (per actor, per node: 429 → RESOURCE_EXHAUSTED, before any query).
 * Each page is one List dispatch (its connection is back in the pool when
 * it answers: a paused stream holds none), run through the node's FIFO of
 * pages so any number of streams hold at most a few connections (on
 * PGlite one page at a time, paced: runtime/streams/page-queue.ts).
 * A page is written whole; the next is queried only once the transport's
 * buffer drained: a slow reader slows the query, and at most one page
 * (≤ 200 rows) plus the transport's buffer is held. A call that ended
 * (cancel, deadline, server stop) queries no further page.
 */
export async function runStreamList(cc: CallContext, ex: GrpcExchange, request: Uint8Array, started: () => void): Promise<GrpcReply> {
  const t = cc.types;
  const m = decodeMessage(t.listRequest, request);
  const size = typeof m.page_size === 'number' && m.page_size !== 0 ? m.page_size : STREAM_BATCH;
  const streams = cc.ctx.services.streams;
  const release = streams.slots.take({ projectId: cc.ctx.scope!.project.id, actor: streamActorOf(cc.ctx.actor) }, 'stream');
  try {
    let token = typeof m.page_token === 'string' ? m.page_token : '';
    let first = true;
    // One page: its query and the writing of its rows, both inside the node's page queue, so a paced
    // queue (PGlite) pauses as long as both took. Null once the call ended.
    const page = async (): Promise<{ next: string | undefined; full: boolean } | null> => {
      if (ex.ended) return null;
      const args = listArgsOf({ ...m, page_token: token, include_total: false }, size);
      const result = await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.StreamList, { args });
      const body = result.body as { data: Array<Record<string, unknown>>; page: Page };
      if (first) {
        first = false;
        started();
      }
      let full = false;
      for (const row of body.data) {
        if (ex.ended) return null;
        full = !ex.write(encodeMessage(t.row, messageOfRow(t.entity, row))) || full;
      }
      return { next: body.page.next, full };
    };
    for (;;) {
      const written = await streams.pages.run(page);
      if (written === null || written.next === undefined) return DONE;
      // The next page waits until the transport took this one: a slow reader holds at most one page here.
      if (written.full) await ex.drained();
      token = written.next;
    }
  } finally {
    release();
  }
}

/**
 * BatchCreate: the client's OrderInput messages, at most the batch bound,
 * then one BatchCreate (one transaction, all or nothing). A call that ends
 * before the client half-closes writes nothing.
 */
export async function runBatchCreate(cc: CallContext, ex: GrpcExchange): Promise<GrpcReply> {
  const t = cc.types;
  const max = cc.ctx.services.limits.maxBatchRows;
  const items: Array<Record<string, unknown>> = [];
  for (;;) {
    const bytes = await ex.nextMessage();
    if (bytes === null) break;
    if (items.length >= max) throw validationFailed('Batch.TooLarge', `at most ${max} rows per batch`, 'items');
    try {
      items.push(bodyOfInput(t.entity, decodeMessage(t.input, bytes)));
    } catch (err) {
      if (!ServiceError.is(err)) throw err;
      throw new ServiceError(err.code, err.reasonCode, `items[${items.length}]: ${err.message}`, { ...err.details, field: `items[${items.length}]` });
    }
  }
  if (ex.ended) return DONE;
  const result = await dispatchEntity(cc, GRPC_METHOD_CAPABILITIES.BatchCreate, { body: { items } });
  const rows = (result.body as { data: Array<Record<string, unknown>> }).data;
  return { kind: 'message', bytes: encodeMessage(t.batchResponse, { items: rows.map((r) => messageOfRow(t.entity, r)) }) };
}

/**
 * Watch: dispatched as its realtime twin (`Realtime.Subscribe`, protocol
 * grpc), so grants, row policy, masks, the filter's rules and the realtime
 * quota are `/api/realtime`'s; then attached to the realtime hub until the
 * call ends. Each change is names only, never values.
 */
export async function runWatch(cc: CallContext, ex: GrpcExchange, request: Uint8Array, started: () => void): Promise<GrpcReply> {
  const t = cc.types;
  const m = decodeMessage(t.watchRequest, request);
  const hub = cc.ctx.services.realtime;
  if (hub === undefined) throw new ServiceError('UNAVAILABLE', 'Realtime.Disabled', 'realtime is not enabled on this node');
  const filter = typeof m.filter === 'string' ? m.filter : '';
  const base = cc.ctx.inv;
  const twin = await cc.dispatch({
    ...base, protocol: 'grpc', operation: REALTIME_SPECS.subscribe, body: undefined, args: undefined,
    query: new Map([['entity', t.entity.entityName], ['filter', filter]]),
    authenticated: cc.ctx.actor, bindingId: cc.bindingId,
  });
  if (!twin.ok) throw new Refused(twin.error);
  // Why the stream ends before the client does: a slow consumer, its session revoked, or its project's grants changed.
  let endedWith: ServiceError | null = null;
  let overflow: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    overflow = resolve;
  });
  const stop = (error: ServiceError): void => {
    endedWith ??= error;
    overflow();
  };
  let backlog = 0;
  let waiting = false;
  const recipient: RealtimeRecipient = {
    send: () => {},
    notify: (change: ChangeNotice) => {
      if (ex.ended || endedWith !== null) return;
      const msg: Message = { kind: change.kind, entity_id: change.entityId, changed_fields: [...change.changedFields] };
      if (ex.write(encodeMessage(t.change, msg))) return;
      backlog++;
      if (backlog > MAX_WATCH_BACKLOG) {
        stop(new ServiceError('QUOTA_EXCEEDED', 'Realtime.SlowConsumer', 'slow consumer: too many unsent changes'));
      } else if (!waiting) {
        waiting = true;
        void ex.drained().then(() => {
          waiting = false;
          backlog = 0;
        });
      }
    },
  };
  let detach: () => void;
  try {
    detach = await hub.attach(twin.result.body as PreparedSubscription, base.correlationId, recipient);
  } catch (err) {
    throw new ServiceError('UNAVAILABLE', 'Realtime.FollowerUnavailable', 'the event log cannot be followed right now', { retryable: true }, err);
  }
  // As a realtime connection: a revoked session (or deleted API key) ends it, and so does a grant change in its
  // project (it was authorized once, at subscribe); the client subscribes again to be authorized anew.
  const owner = connectionOwner(cc.ctx.actor);
  const untrack = sessionConnections.track(owner, () => stop(ownerEndedError(owner!, 'stream')));
  const untrackProject = owner === null ? () => {} : projectConnections.track(cc.ctx.scope!.project.id, () => stop(grantsChangedError('stream')));
  try {
    started();
    await Promise.race([ex.whenEnded, stopped]);
  } finally {
    untrack();
    untrackProject();
    detach();
  }
  return endedWith === null ? DONE : { kind: 'error', error: endedWith };
}
