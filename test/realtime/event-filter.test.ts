import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluateEventFilter, parseEventFilterAst } from '../../runtime/filter/event-filter.js';
import { ServiceError } from '../../runtime/errors/service-error.js';

const event = {
  id: 'e1', type: 'entity.Order.updated', occurredAt: '2026-11-22T07:00:00.000Z', publicationVersion: 3,
  data: { entity: 'Order', entityId: 'x', changedFields: ['status'], status: 'paid', total: 12, note: null },
};
const matches = (raw: unknown): boolean => evaluateEventFilter(parseEventFilterAst(raw), event);
const rejects = (raw: unknown, field: string, reason: string): void => {
  assert.throws(() => parseEventFilterAst(raw), (e: unknown) => {
    assert.ok(e instanceof ServiceError);
    assert.equal(e.code, 'VALIDATION_FAILED');
    assert.equal(e.reasonCode, `Filter.${reason}`);
    assert.equal(e.details.field, field);
    return true;
  });
};

describe('event filter AST', () => {
  it('selects by dotted JSON path and compares with each operator', () => {
    assert.equal(matches({ path: '$.type', op: 'eq', value: 'entity.Order.updated' }), true);
    assert.equal(matches({ path: '$.type', op: 'ne', value: 'entity.Order.updated' }), false);
    assert.equal(matches({ path: '$.type', op: 'startsWith', value: 'entity.Order.' }), true);
    assert.equal(matches({ path: '$.type', op: 'endsWith', value: '.created' }), false);
    assert.equal(matches({ path: '$.data.status', op: 'in', value: ['paid', 'shipped'] }), true);
    assert.equal(matches({ path: '$.data.total', op: 'gt', value: 10 }), true);
    assert.equal(matches({ path: '$.data.total', op: 'lt', value: 10 }), false);
    assert.equal(matches({ path: '$.data.total', op: 'gt', value: '10' }), false, 'mixed types never compare');
    assert.equal(matches({ path: '$.occurredAt', op: 'gt', value: '2026-01-01' }), true);
    assert.equal(matches({ path: '$.data.note', op: 'isNull', value: true }), true);
    assert.equal(matches({ path: '$.data.missing.deeper', op: 'isNull', value: true }), true);
    assert.equal(matches({ path: '$.data.status', op: 'isNull', value: true }), false);
  });

  it('combines with and / or / not', () => {
    assert.equal(matches({ and: [{ path: '$.type', op: 'startsWith', value: 'entity.' }, { path: '$.data.status', op: 'eq', value: 'paid' }] }), true);
    assert.equal(matches({ or: [{ path: '$.type', op: 'eq', value: 'x' }, { path: '$.data.total', op: 'eq', value: 12 }] }), true);
    assert.equal(matches({ not: { path: '$.data.status', op: 'eq', value: 'paid' } }), false);
  });

  it('rejects invalid filters with 422 naming the field', () => {
    rejects({ path: 'type', op: 'eq', value: 'a' }, 'filter.path', 'InvalidPath');
    rejects({ path: '$.data[0]', op: 'eq', value: 'a' }, 'filter.path', 'InvalidPath');
    rejects({ and: [{ path: '$.type', op: 'eq', value: 'a' }, { path: '$.type', op: 'like', value: 'a' }] }, 'filter.and[1].op', 'UnknownOperator');
    rejects({ or: [] }, 'filter.or', 'InvalidFilter');
    rejects({ not: { path: '$.type', op: 'in', value: [] } }, 'filter.not.value', 'InvalidValue');
    rejects({ path: '$.type', op: 'eq', value: 'a', extra: 1 }, 'filter.extra', 'UnknownField');
    rejects([], 'filter', 'InvalidFilter');
    rejects({ path: '$.type', op: 'isNull', value: 'yes' }, 'filter.value', 'InvalidValue');
  });

  it('bounds depth (8) and size (200 nodes)', () => {
    let deep: unknown = { path: '$.type', op: 'eq', value: 'a' };
    for (let i = 0; i < 7; i++) deep = { not: deep };
    assert.equal(matches(deep), true, 'seven nots of a false leaf');
    rejects({ not: deep }, 'filter.not.not.not.not.not.not.not.not', 'TooDeep');
    const wide = { or: Array.from({ length: 200 }, () => ({ path: '$.type', op: 'eq', value: 'a' })) };
    rejects(wide, 'filter.or[199]', 'TooLarge');
  });
});
