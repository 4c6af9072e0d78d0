import { notFound, validationFailed } from '../../errors/service-error.js';
import { single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { explainContract } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';
import { findDecision, type DecisionRecord } from './decision-record.js';

/** Correlation ids the adapters accept from clients (adapters/rest/request-meta.ts) or generate (UUIDs). */
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * After flushing this node's buffer, how long to wait for a row another node
 * may still hold: every node flushes at least every 50 ms (audit-writer.ts),
 * so this covers a busy peer with room to spare, and bounds what an unknown
 * id costs.
 */
const PEER_WAIT_MS = 600;
const POLL_MS = 100;

async function lookup(ctx: OperationContext, correlationId: string): Promise<DecisionRecord | null> {
  const { db, audit } = ctx.services;
  const first = await findDecision(db, ctx.actor, correlationId);
  if (first !== null) return first;
  // Not written yet: the request may have answered within the last flush interval.
  await audit.flush();
  const deadline = Date.now() + PEER_WAIT_MS;
  for (;;) {
    const found = await findDecision(db, ctx.actor, correlationId);
    if (found !== null || Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * `GET /api/Explainability/access?correlationId=…`, the target of every
 * error's explainUrl: the decision recorded for that request. Scope `none`,
 * so the bare link works with just the caller's bearer; what the caller may
 * read is decided by the lookup itself (decision-record.ts). Another actor's
 * record answers 404 like a missing one, so ids of others' requests cannot
 * be probed.
 */
export const EXPLAIN_ACCESS_READ_SPEC: DeclaredSpec = {
  id: 'Explainability.Access.Read',
  authn: 'user',
  scope: 'none',
  grants: noGrants,
  contract: explainContract({
    summary: 'The decision recorded for a request (every error\'s `explainUrl`)',
    description: 'The same actor or the platform admin; another actor\'s record answers 404. Readable within 10 s of the response.',
    routes: [
      { method: 'GET', path: 'Explainability/access' },
      { method: 'GET', path: 'Explainability/access/read', summary: 'The decision recorded for a request (same as `GET /Explainability/access`)' },
    ],
    query: { correlationId: { description: 'The request\'s correlation id (its `X-Service-Correlation-Id`).', schema: { type: 'string', pattern: CORRELATION_ID.source }, required: true } },
    output: { status: 200, body: S.ExplainDecisionRecord }, errors: [401, 404, 422],
  }),
  async execute(ctx) {
    const id = ctx.inv.query.get('correlationId');
    if (id === undefined || id === '') throw validationFailed('Explainability.CorrelationIdRequired', 'query parameter correlationId is required', 'correlationId');
    if (!CORRELATION_ID.test(id)) throw validationFailed('Explainability.InvalidCorrelationId', 'correlationId is not a correlation id', 'correlationId');
    const record = await lookup(ctx, id);
    if (record === null) throw notFound('Explainability.RecordNotFound', 'no decision record of yours has this correlationId');
    return single(ctx, record);
  },
};
