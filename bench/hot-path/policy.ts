/**
 * The policy workloads W1P/W2P: W1 and W2 as a registered user whose read grant carries a
 * row filter and a field mask (CONTRACT "Authorization" → "Row policy and field masks").
 * Every seeded row belongs to that user, so the filter keeps every row W1/W2 read and the
 * difference to W1/W2 is the cost of the policy, not of reading fewer rows.
 */
import { call, expectStatus as expect } from '../http-call.js';
import { ENTITY_NAME, ENTITY_PATH, listQuery } from './order-model.js';

export const OWNER_ONLY = { owner: { eq: { $actor: 'subjectId' } } };
/** Readable fields of the policy user: everything but `qty` (the mask under test). */
export const POLICY_FIELDS = ['customerName', 'status', 'total', 'owner'];
export const MASKED_FIELD = 'qty';

/**
 * Grants the policy user `read` with the row filter and field mask. Answers null when the
 * build refuses the grant shape with a 422 (a build before row policy): the policy workloads
 * are then skipped with the returned reason instead of failing the whole run.
 */
export async function grantPolicyRead(url: string, headers: Record<string, string>, projectId: string, subjectId: string): Promise<string | null> {
  const a = await call('POST', `${url}/api/projects/${projectId}/capability-grants`, headers, {
    subjectId, grant: `entity:${ENTITY_NAME}:read`, rowFilter: OWNER_ONLY, fields: POLICY_FIELDS,
  });
  if (a.status === 422) {
    const reason = (a.body as { error?: { reasonCode?: string; message?: string } } | undefined)?.error;
    return `W1P/W2P skipped: this build refuses a grant with rowFilter/fields (422 ${reason?.reasonCode ?? ''}: ${reason?.message ?? a.text.slice(0, 120)})`;
  }
  expect('policy grant', a, 201);
  return null;
}

/** One read and one list as the policy user: the rows must be there, owned by it, and masked. */
export async function probePolicy(url: string, scope: Record<string, string>, token: string, id: string, subjectId: string): Promise<void> {
  const headers = { ...scope, authorization: `Bearer ${token}` };
  const one = await call('GET', `${url}/api/${ENTITY_PATH}/${id}`, headers);
  const row = (one.body as { data?: Record<string, unknown> } | undefined)?.data;
  if (one.status !== 200 || row?.id !== id || row.owner !== subjectId || MASKED_FIELD in row) {
    throw new Error(`policy probe read: ${one.status} ${one.text.slice(0, 300)}`);
  }
  const list = await call('GET', `${url}/api/${ENTITY_PATH}?${listQuery('paid')}`, headers);
  const rows = (list.body as { data?: Array<Record<string, unknown>> } | undefined)?.data ?? [];
  if (list.status !== 200 || rows.length !== 20 || rows.some((r) => r.status !== 'paid' || r.owner !== subjectId || MASKED_FIELD in r)) {
    throw new Error(`policy probe list: ${list.status} ${list.text.slice(0, 300)}`);
  }
}
