/**
 * Stage 6's policy result (spec: Policy results): which decision a request's
 * audit row records for each way it can end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { decisionOf } from '../../runtime/pipeline/evidence.js';
import { stageNameOf } from '../../runtime/pipeline/audit-row.js';

describe('decisionOf', () => {
  it('is Allow for a plain success and Mask when fields were masked', () => {
    assert.equal(decisionOf(null, []), 'Allow');
    assert.equal(decisionOf(null, ['salary']), 'Mask');
  });

  it('is Challenge for a step-up refusal, whatever its code', () => {
    assert.equal(decisionOf(new ServiceError('ACCESS_DENIED', 'Access.StepUpRequired', 'step up', { requiredStrength: 'mfa-totp' }), []), 'Challenge');
  });

  it('is Deny for authentication, authorization and quota refusals', () => {
    assert.equal(decisionOf(new ServiceError('UNAUTHORIZED', 'Auth.MissingBearer', 'x'), []), 'Deny');
    assert.equal(decisionOf(new ServiceError('ACCESS_DENIED', 'ExposureBinding.RequiredGrantMissing', 'x'), []), 'Deny');
    assert.equal(decisionOf(new ServiceError('QUOTA_EXCEEDED', 'Quota.ReadMonthly.Exhausted', 'x'), []), 'Deny');
  });

  it('is Error when the platform failed, and keeps the access decision for input errors', () => {
    assert.equal(decisionOf(new ServiceError('INTERNAL', 'Internal.Unexpected', 'x'), []), 'Error');
    assert.equal(decisionOf(new ServiceError('UNAVAILABLE', 'Storage.Unavailable', 'x'), []), 'Error');
    assert.equal(decisionOf(new ServiceError('VALIDATION_FAILED', 'Query.UnknownSortField', 'x'), []), 'Allow');
    assert.equal(decisionOf(new ServiceError('NOT_FOUND', 'Entity.NotFound', 'x'), ['salary']), 'Mask');
  });
});

describe('stageNameOf', () => {
  it('names the stage that refused, RowPolicy for a mask, Quota for a refusal after the row policy, RowPolicy for an Allow, Executed for an error while the operation ran', () => {
    assert.deepEqual([0, 1, 2, 3, 4].map((n) => stageNameOf(n, 'Deny')), ['Adapter', 'Authenticate', 'ResolveScope', 'Governance', 'Grants']);
    assert.equal(stageNameOf(4, 'Challenge'), 'Grants');
    assert.equal(stageNameOf(5, 'Deny'), 'Quota');
    assert.equal(stageNameOf(6, 'Mask'), 'RowPolicy');
    assert.equal(stageNameOf(6, 'Allow'), 'RowPolicy');
    assert.equal(stageNameOf(6, 'Error'), 'Executed');
    assert.equal(stageNameOf(0, 'Allow'), 'Adapter');
    assert.equal(stageNameOf(9, 'Allow'), null);
  });
});
