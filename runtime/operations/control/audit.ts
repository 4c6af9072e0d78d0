import { validationFailed } from '../../errors/service-error.js';
import { followAudit, lastAuditSeq, listAudit, parseAuditFilter } from '../../audit/audit-store.js';
import { list } from '../envelopes.js';
import { noGrants, type OperationSpec } from '../types.js';

/** Audit of a project: admin only (it names every caller and operation of the project). */
const auditOp = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

const MAX_BIGINT = 9223372036854775807n;

/** Positions and cursors are `a<seq>` (cursor: base64url of it). */
function seqOf(position: string, field: string, reason: string): string {
  if (!/^a\d{1,19}$/.test(position) || BigInt(position.slice(1)) > MAX_BIGINT) throw validationFailed(reason, `${field} is malformed`, field);
  return position.slice(1);
}

export const AUDIT_SPECS = {
  /** `GET /api/audit?filter=…&pageSize=…&cursor=…`: rows in write order, `page.next` while more remain. */
  list: auditOp('Audit.List', async (ctx) => {
    const q = ctx.inv.query;
    const sizeText = q.get('pageSize') ?? '50';
    if (!/^\d{1,4}$/.test(sizeText) || Number(sizeText) < 1) throw validationFailed('Query.InvalidPageSize', 'pageSize must be a positive integer', 'pageSize');
    const pageSize = Number(sizeText);
    if (pageSize > ctx.services.limits.maxPageSize) throw validationFailed('Query.PageSizeTooLarge', `pageSize must be at most ${ctx.services.limits.maxPageSize}`, 'pageSize');
    const cursor = q.get('cursor');
    const afterSeq = cursor === undefined || cursor === '' ? null : seqOf(Buffer.from(cursor, 'base64url').toString('utf8'), 'cursor', 'Query.InvalidCursor');
    const res = await listAudit(ctx.services.db, ctx.scope!.project.id, { ...parseAuditFilter(q.get('filter')), afterSeq, pageSize });
    return list(ctx, res.rows, {
      number: 1, size: pageSize,
      ...(res.more && res.lastSeq !== null ? { next: Buffer.from(`a${res.lastSeq}`).toString('base64url') } : {}),
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
    const after = given === null || given === '' ? await lastAuditSeq(db) : seqOf(given, 'Last-Event-ID', 'Audit.InvalidLastEventId');
    const log = ctx.services.log;
    const correlationId = ctx.inv.correlationId;
    return {
      status: 200,
      body: undefined,
      stream: {
        open: (sink) => followAudit(db, projectId, after, (seq, row) => sink.send('service.audit', JSON.stringify(row), `a${seq}`), (err) => {
          log.warn('audit tail failed; ending the stream', { correlationId, error: err instanceof Error ? err.message : String(err) });
          sink.end();
        }),
      },
    };
  }),
};
