import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES, GRAPHQL_CODE, GRPC_STATUS, HTTP_STATUS, MCP_CODE, RETRYABLE } from '../../runtime/errors/codes.js';
import { toErrorEnvelope } from '../../runtime/errors/envelope.js';
import { maskError } from '../../runtime/errors/mask.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import type { Logger } from '../../runtime/log.js';

function recordingLogger(): Logger & { lines: Array<[string, Record<string, unknown> | undefined]> } {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  const log: Logger & { lines: typeof lines } = {
    lines,
    info: (m, f) => lines.push([m, f]),
    warn: (m, f) => lines.push([m, f]),
    error: (m, f) => lines.push([m, f]),
    child: () => log,
  };
  return log;
}

describe('error table', () => {
  it('maps every code in every protocol projection', () => {
    for (const code of ERROR_CODES) {
      assert.ok(HTTP_STATUS[code] >= 400 && HTTP_STATUS[code] < 600, code);
      assert.ok(Number.isInteger(GRPC_STATUS[code]) && GRPC_STATUS[code] > 0, code);
      assert.equal(GRAPHQL_CODE[code], code);
      assert.ok(MCP_CODE[code] < 0, code);
      assert.equal(typeof RETRYABLE[code], 'boolean');
    }
    assert.equal(MCP_CODE.ACCESS_DENIED, -32003, 'fixed by the spec');
    assert.deepEqual([HTTP_STATUS.UNAUTHORIZED, HTTP_STATUS.ACCESS_DENIED, HTTP_STATUS.NOT_FOUND, HTTP_STATUS.CONFLICT, HTTP_STATUS.VALIDATION_FAILED, HTTP_STATUS.QUOTA_EXCEEDED], [401, 403, 404, 409, 422, 429]);
  });

  it('masks an undeclared failure as INTERNAL, logs it, and leaks nothing', () => {
    const log = recordingLogger();
    const leaked = new Error('duplicate key value violates unique constraint "secret_table_pkey" for tenant other-co');
    const masked = maskError(leaked, 'corr-12345678', log);
    assert.equal(masked.code, 'INTERNAL');
    assert.equal(masked.reasonCode, 'Internal.Unexpected');
    const body = JSON.stringify(toErrorEnvelope(masked, 'corr-12345678'));
    assert.ok(!body.includes('secret_table'), body);
    assert.ok(!body.includes('other-co'), body);
    assert.ok(body.includes('corr-12345678'));
    assert.equal(log.lines.length, 1);
    assert.equal(log.lines[0]![1]!.correlationId, 'corr-12345678');
    assert.match(String(log.lines[0]![1]!.errorHash), /^[0-9a-f]{12}$/);
  });

  it('passes declared errors through unchanged and recognises them across realms', () => {
    const log = recordingLogger();
    const declared = new ServiceError('CONFLICT', 'Order.Thing', 'x', { field: 'f' });
    assert.equal(maskError(declared, 'c', log), declared);
    assert.equal(log.lines.length, 0);
    const foreign = Object.assign(Object.create(null), { [Symbol.for('plinth.ServiceError')]: true });
    assert.ok(ServiceError.is(foreign));
    assert.ok(!ServiceError.is(new Error('plain')));
  });

  it('projects the envelope with field, missing grants and an explain link for denials', () => {
    const env = toErrorEnvelope(new ServiceError('ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing', 'no', { missingGrants: ['entity:A:read'], bindingId: 'rest:Entity.A.Read' }), 'cid-1', '/v1');
    assert.deepEqual(env, {
      error: {
        code: 'ACCESS_DENIED', message: 'no', reasonCode: 'ExposureBinding.RequiredGrantMissing', correlationId: 'cid-1', retryable: false,
        bindingId: 'rest:Entity.A.Read', missingGrants: ['entity:A:read'], explainUrl: '/v1/Explainability/access?correlationId=cid-1',
      },
    });
  });

  it('links every error, not only denials, to its explainability record', () => {
    const env = toErrorEnvelope(new ServiceError('VALIDATION_FAILED', 'Query.UnknownSortField', 'bad sort', { field: 'sort' }), 'c d/1');
    assert.deepEqual(env, {
      error: {
        code: 'VALIDATION_FAILED', message: 'bad sort', reasonCode: 'Query.UnknownSortField', correlationId: 'c d/1', retryable: false,
        field: 'sort', explainUrl: '/api/Explainability/access?correlationId=c%20d%2F1',
      },
    });
  });
});
