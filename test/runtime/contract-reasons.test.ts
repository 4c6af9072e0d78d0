/**
 * Request validation's reporting options (runtime/operations/contract/validate-body.ts):
 * `reasons.order: 'properties'` reports field by field as sequential handler checks did,
 * `fields['x[]']` gives problems inside an array's items their own reason, and an
 * answer check accepts `output.alsoStatus` (a PUT that answers 201 or 200).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { answerMismatch, defineSchemas, ref, validateBody, type OperationContract } from '../../runtime/operations/contract/index.js';
import { ServiceError } from '../../runtime/errors/service-error.js';

const S = defineSchemas({
  TestOrderItem: { type: 'object', required: ['grant'], additionalProperties: false, properties: { grant: { type: 'string', pattern: '^g:' }, filter: { type: 'object' } } },
  TestOrderInput: {
    type: 'object', required: ['first', 'second'], additionalProperties: false,
    properties: { first: { type: 'string' }, second: { type: 'string' }, items: { type: 'array', maxItems: 2, items: { oneOf: [ref('TestOrderItem'), { type: 'string', pattern: '^g:' }] } } },
  },
  TestOrderAnswer: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
});

const contract = (order?: 'properties'): OperationContract => ({
  tag: { name: 'Test', description: 'test' }, summary: 'test', routes: [{ method: 'PUT', path: 'test' }],
  body: S.TestOrderInput, reasons: { prefix: 'Test', ...(order === undefined ? {} : { order }), fields: { first: 'Test.BadFirst', second: 'Test.BadSecond', 'items[]': 'Test.BadItem' } },
  output: { status: 201, alsoStatus: 200, body: S.TestOrderAnswer }, errors: [422], metering: { unit: 'none', why: 'test' }, stability: 'stable',
});

function refusal(c: OperationContract, body: unknown): { reason: string; field: string | undefined } {
  try {
    validateBody(c, 'Test.Op', body);
  } catch (err) {
    assert.ok(ServiceError.is(err));
    return { reason: err.reasonCode, field: err.details.field as string | undefined };
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

describe('request validation reasons', () => {
  it('by default: unknown, then missing, then invalid', () => {
    assert.deepEqual(refusal(contract(), { first: 5 }), { reason: 'Test.BadSecond', field: 'second' });
  });

  it('in properties order: an unknown top-level property first, then the first field with a problem, missing or invalid', () => {
    const c = contract('properties');
    assert.deepEqual(refusal(c, { first: 5 }), { reason: 'Test.BadFirst', field: 'first' });
    assert.deepEqual(refusal(c, { first: 5, extra: 1 }), { reason: 'Test.UnknownProperty', field: 'extra' });
    assert.deepEqual(refusal(c, { first: 'a' }), { reason: 'Test.BadSecond', field: 'second' });
  });

  it('gives problems inside an item their own reason, the array its own, and reports the first item with one', () => {
    const c = contract('properties');
    const base = { first: 'a', second: 'b' };
    assert.deepEqual(refusal(c, { ...base, items: 'x' }), { reason: 'Test.InvalidProperty', field: 'items' });
    assert.deepEqual(refusal(c, { ...base, items: ['g:1', 'g:2', 'g:3'] }), { reason: 'Test.InvalidProperty', field: 'items' });
    assert.deepEqual(refusal(c, { ...base, items: ['g:1', 'nope'] }), { reason: 'Test.BadItem', field: 'items[1]' });
    assert.deepEqual(refusal(c, { ...base, items: [{ grant: 'nope' }] }), { reason: 'Test.BadItem', field: 'items[0].grant' });
    assert.deepEqual(refusal(c, { ...base, items: [{ grant: 'g:1', filter: [1] }] }), { reason: 'Test.BadItem', field: 'items[0].filter' });
    // In one item an unknown property comes before a missing one, as an item check goes; an earlier item comes first.
    assert.deepEqual(refusal(c, { ...base, items: [{ x: 1 }] }), { reason: 'Test.UnknownProperty', field: 'items[0].x' });
    assert.deepEqual(refusal(c, { ...base, items: ['bad', { grant: 'g:1', x: 1 }] }), { reason: 'Test.BadItem', field: 'items[0]' });
  });

  it('an answer may carry the declared status or alsoStatus', () => {
    const c = contract();
    assert.equal(answerMismatch(c, 201, { ok: true }), null);
    assert.equal(answerMismatch(c, 200, { ok: true }), null);
    assert.match(answerMismatch(c, 202, { ok: true }) ?? '', /status 202/);
  });
});
