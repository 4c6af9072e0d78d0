/**
 * dispatch()'s input check (runtime/pipeline/storable-input.ts) on the
 * Invocation itself: the header-borne fields that neither uWS nor HTTP/2 let
 * a NUL reach, protocol arguments, and the walk's edges. The HTTP surfaces
 * are covered end to end by test/rest/unstorable-text.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { unstorableTextIn } from '../../runtime/storable-text.js';
import { unstorableTextOfInvocation } from '../../runtime/pipeline/storable-input.js';
import type { Invocation, OperationSpec } from '../../runtime/operations/types.js';

const SPEC = { id: 'Test.Op' } as OperationSpec;

function invocation(over: Partial<Invocation>): Invocation {
  return {
    correlationId: 'c0rrelation', protocol: 'grpc', operation: SPEC, collection: null, relation: null, params: {}, query: new Map(), body: undefined,
    bearer: null, tenantHeader: 't', projectHeader: 'p', branchHeader: null, idempotencyKey: null, ifMatch: null, basePath: '/api', ...over,
  };
}

describe('unstorable text in an Invocation', () => {
  it('names the header a NUL arrived in', () => {
    assert.deepEqual(unstorableTextOfInvocation(invocation({ branchHeader: 'ma\u0000in' })), { field: 'X-Service-Branch', kind: 'nul' });
    assert.deepEqual(unstorableTextOfInvocation(invocation({ tenantHeader: 't\u0000' })), { field: 'X-Service-Tenant', kind: 'nul' });
    assert.deepEqual(unstorableTextOfInvocation(invocation({ idempotencyKey: 'k\uDC00' })), { field: 'Idempotency-Key', kind: 'surrogate' });
    assert.deepEqual(unstorableTextOfInvocation(invocation({ headers: { 'service-signature': 'x\u0000' } })), { field: 'service-signature', kind: 'nul' });
  });

  it('decodes JSON arguments holding an escape (a gRPC or GraphQL filter) and names the path inside', () => {
    const filter = JSON.stringify({ title: { eq: 'a\u0000' } });
    assert.match(filter, /\\u0000/); // plain ASCII on the wire
    assert.deepEqual(unstorableTextOfInvocation(invocation({ args: { filter } })), { field: 'filter.title.eq', kind: 'nul' });
    // An escaped surrogate pair is well-formed text.
    assert.equal(unstorableTextOfInvocation(invocation({ args: { filter: '{"title":{"eq":"\\ud83d\\ude00"}}' } })), null);
    // Text that is not JSON is left to the operation's own parser.
    assert.equal(unstorableTextOfInvocation(invocation({ args: { filter: '{\\u0000' } })), null);
  });

  it('walks body values and keys, without recursion and without looking into non-plain objects', () => {
    assert.deepEqual(unstorableTextIn({ items: [{ ok: 'x' }, { email: 'a\u0000' }] }), { field: 'items[1].email', kind: 'nul' });
    assert.deepEqual(unstorableTextIn({ a: { ['k\u0000']: 1 } }), { field: 'a.k\\u0000', kind: 'nul' });
    let deep: unknown = 'x\uD800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(unstorableTextIn(deep)?.kind, 'surrogate');
    assert.equal(unstorableTextIn({ at: new Date(0), n: 1, b: true, z: null }), null);
  });
});
