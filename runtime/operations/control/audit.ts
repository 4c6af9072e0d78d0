import { decodeSeqCursor, encodeSeqCursor, logPageSize, seqOfPosition } from '../log-paging.js';
import { followAudit, lastAuditSeq, listAudit, parseAuditFilter } from '../../audit/audit-store.js';
import { validationFailed } from '../../errors/service-error.js';
import { list } from '../envelopes.js';
import { slottedStream } from '../../streams/slotted-stream.js';
import { noGrants, type OperationSpec } from '../types.js';

/** Audit of a project: admin only (it names every caller and operation of the project). */
const auditOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

/** Positions and cursors are `a<seq>` (cursor: base64url of it). */
const seqOf = (position: string, field: string, reason: string): string => seqOfPosition(position, 'a', field, reason);

export const AUDIT_SPECS = {
  /** `GET /api/audit?filter=…&pageSize=…&cursor=…`: rows in write order, `page.next` while more remain. */
  list: auditOp('Audit.List', async (ctx) => {
    const q = ctx.inv.query;
    const pageSize = logPageSize(ctx);
    const afterSeq = decodeSeqCursor(q.get('cursor'), 'a');
    const res = await listAudit(ctx.services.db, ctx.scope!.project.id, { ...parseAuditFilter(q.get('filter')), afterSeq, pageSize });
    return list(ctx, res.rows, {
      number: 1, size: pageSize,
      ...(res.more && res.lastSeq !== null ? { next: encodeSeqCursor('a', res.lastSeq) } : {}),
    });
  }),
  /**
   * SSE of the project's new audit rows: `event: service.audit`, `id: a<seq>`,
   * `data:` the row. Starts at the current end, or after `Last-Event-ID`
   * (or `lastEventId` in the query). Rows appear once the buffered writer flushed (≈50 ms).
   */
  tail: auditOp('Audit.Tail', async (ctx) => {
    const projectId = ctx.scope!.project.id;
    const db = ctx.services.db;
    const given = ctx.inv.lastEventId ?? ctx.inv.query.get('lastEventId') ?? null;
    const end = await lastAuditSeq(db);
    const after = given === null || given === '' ? end : seqOf(given, 'Last-Event-ID', 'Audit.InvalidLastEventId');
    // Past the end: no tail ever handed out this position; resuming after it would skip rows silently.
    if (BigInt(after) > BigInt(end)) throw validationFailed('Audit.InvalidLastEventId', 'Last-Event-ID is past the end of the audit log', 'Last-Event-ID');
    const log = ctx.services.log;
    const correlationId = ctx.inv.correlationId;
    // A long-lived stream: it holds one of the node's stream slots until it ends.
    const stream = await slottedStream(ctx, async () => ({
      open: (sink) => followAudit(db, projectId, after, (seq, row) => sink.send('service.audit', JSON.stringify(row), `a${seq}`), (err) => {
        log.warn('audit tail failed; ending the stream', { correlationId, error: err instanceof Error ? err.message : String(err) });
        sink.end();
      }),
    }));
    return { status: 200, body: undefined, stream };
  }),
};
