import { ServiceError } from '../../errors/service-error.js';
import { noteCheckedAnswer } from './answer-log.js';
import { validatorOf } from './validate-body.js';
import type { OperationContract } from './types.js';

/**
 * What is wrong with an answer against the operation's declared output, or
 * null when it matches. Only the declared success (status and JSON body) is
 * checked; errors carry the shared envelope. Tests run every server with
 * this on (CHECK_ANSWERS), so every suite checks the schemas it meets.
 */
export function answerMismatch(contract: OperationContract, status: number, body: unknown, streamed = false): string | null {
  const out = contract.output;
  // An upgrade's result is what the adapter needs to finish the handshake, not an HTTP answer.
  if (status >= 300 || out.upgrade === true) return null;
  if (status !== out.status && status !== out.alsoStatus && !(out.conditional === true && status === 304)) return `status ${status}, declared ${out.status}`;
  // A streamed result (SSE, a graphql-ws subscription) has no body to check: its events are the stream's.
  if (streamed || out.body === undefined || out.mediaType !== undefined || out.sse !== undefined || status === 304) return null;
  const validate = validatorOf(out.body.name);
  if (validate(body)) return null;
  return (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`).join('; ');
}

/**
 * What dispatch() does with CHECK_ANSWERS on (every test server): an answer the
 * operation's contract does not describe becomes a 500 `Contract.AnswerMismatch`
 * naming the difference, whatever the protocol; a checked success is noted for
 * npm test's coverage (answer-log.ts) when `log` names a directory.
 */
export function enforceAnswer(operationId: string, contract: OperationContract, status: number, body: unknown, streamed: boolean, log: string | undefined): void {
  const mismatch = answerMismatch(contract, status, body, streamed);
  if (mismatch !== null) throw new ServiceError('INTERNAL', 'Contract.AnswerMismatch', `${operationId} answered what its contract does not declare: ${mismatch}`);
  if (log !== undefined && status < 300) noteCheckedAnswer(log, operationId);
}
