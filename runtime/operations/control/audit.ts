import { decodeSeqCursor, encodeSeqCursor, logPageSize, seqOfPosition } from '../log-paging.js';
import { followAudit, lastAuditSeq, listAudit, parseAuditFilter } from '../../audit/audit-store.js';
import { validationFailed } from '../../errors/service-error.js';
import { list } from '../envelopes.js';
import { slottedStream } from '../../streams/slotted-stream.js';
import { noGrants, type DeclaredSpec, type OperationSpec } from '../types.js';
import { CONTROL_PLANE_UNMETERED, type OperationContract, type TagDecl } from '../contract/index.js';
import { AUDIT_FILTER, AUDIT_SCHEMAS as S } from './audit-schemas.js';
import { LAST_EVENT_ID_HEADER, LAST_EVENT_ID_QUERY } from './event-schemas.js';

const AUDIT_TAG: TagDecl = { name: 'Audit', description: 'The project\'s audit log.' };
/** Scope resolution (404), missing scope headers or a bad query (422). */
const AUDIT_ERRORS = [401, 403, 404, 422];

type AuditContract = Omit<OperationContract, 'tag' | 'metering' | 'stability' | 'errors'>;

/** Audit of a project: admin only (it names every caller and operation of the project). */
const auditOp = (id: string, contract: AuditContract, execute: OperationSpec['execute']): DeclaredSpec => ({
  id, authn: 'admin', scope: 'project', grants: noGrants, execute,
  contract: { tag: AUDIT_TAG, errors: AUDIT_ERRORS, metering: CONTROL_PLANE_UNMETERED, stability: 'stable', ...contract },
});

/** Positions and cursors are `a<seq>` (cursor: base64url of it). */
const seqOf = (position: string, field: string, reason: string): string => seqOfPosition(position, 'a', field, reason);

export const AUDIT_SPECS = {
  /** `GET /api/audit?filter=…&pageSize=…&cursor=…`: rows in write order, `page.next` while more remain. */
  list: auditOp('Audit.List', {
    summary: 'Page through the project\'s audit rows in write order',
    routes: [{ method: 'GET', path: 'audit' }],
    query: {
      filter: {
        description: 'Audit filter JSON (`reasonCode`, `actor`, `entity`, `operationId`, `decision`, `correlationId`, `stage`, `since`, `until`).',
        schema: { type: 'string', contentMediaType: 'application/json', contentSchema: AUDIT_FILTER },
      },
    },
    sharedParams: ['PageSize', 'Cursor'],
    output: { status: 200, body: S.AuditList },
  }, async (ctx) => {
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
  tail: auditOp('Audit.Tail', {
    summary: 'Follow new audit rows as Server-Sent Events (`id: a<seq>`; resume with Last-Event-ID)',
    description: 'Starts at the current end of the audit log, or after `Last-Event-ID`. Rows appear once the buffered writer flushed (~50 ms).',
    routes: [{ method: 'GET', path: 'audit/tail' }],
    headers: LAST_EVENT_ID_HEADER, query: LAST_EVENT_ID_QUERY,
    output: { status: 200, sse: { event: 'service.audit', data: S.AuditRecord } },
  }, async (ctx) => {
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
