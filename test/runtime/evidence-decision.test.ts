/**
 * Stage 6's policy result (spec: Policy results): which decision a request's
 * audit row records for each way it can end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { decisionOf } from '../../runtime/pipeline/evidence.js';

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
