/**
 * Governance envelopes as functions: body validation, the fail-closed merge
 * down a chain, and the compiled matchers stage 3 and grant creation use.
 * The HTTP behaviour is in test/rest/governance.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledEnvelope, weakerThan } from '../../runtime/governance/compiled.js';
import { parseEnvelopeBody } from '../../runtime/governance/envelope.js';
import { mergeChain } from '../../runtime/governance/merge.js';
import { intersectLists, parsePattern } from '../../runtime/governance/patterns.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { governanceRefusal } from '../../runtime/pipeline/governance.js';
import { PLATFORM_ADMIN, type Actor, type AuthStrength } from '../../runtime/operations/types.js';

const link = (projectId: string, envelope: object) => ({ projectId, envelope });
const compiled = (e: object) => new CompiledEnvelope(mergeChain([link('p', e)]));

function rejects(body: unknown, reasonCode: string): void {
  assert.throws(() => parseEnvelopeBody(body), (err: unknown) => ServiceError.is(err) && err.code === 'VALIDATION_FAILED' && err.reasonCode === reasonCode);
}

describe('governance envelope: input', () => {
  it('accepts every documented field and keeps it as given', () => {
    const envelope = { deniedGrants: ['entity:*:delete'], allowedGrants: ['entity:Doc:*', 'entity:*:read'], maxPageSize: 25, requireStrength: { 'entity:Payment:*': 'mfa-totp' } };
    assert.deepEqual(parseEnvelopeBody({ envelope }), envelope);
    assert.deepEqual(parseEnvelopeBody({ envelope: {} }), {});
  });

  it('refuses bad patterns, strengths, page sizes and shapes with 422 reason codes', () => {
    for (const p of ['entity:doc:read', 'entity:Doc:write', 'Doc:read', 'entity:Doc', 'entity:Doc:read:x', '', 'branch:main:approve', 7]) rejects({ envelope: { deniedGrants: [p] } }, 'Governance.InvalidPattern');
    rejects({ envelope: { allowedGrants: ['entity:*:*', 'nope'] } }, 'Governance.InvalidPattern');
    rejects({ envelope: { requireStrength: { 'entity:X:read': 'password' } } }, 'Governance.InvalidStrength');
    rejects({ envelope: { requireStrength: { 'entity:X:read': 'mfa-sms' } } }, 'Governance.InvalidStrength');
    rejects({ envelope: { requireStrength: { 'entity:x:read': 'mfa-totp' } } }, 'Governance.InvalidPattern');
    for (const n of [0, -1, 1.5, '10', null, 1e12]) rejects({ envelope: { maxPageSize: n } }, 'Governance.InvalidMaxPageSize');
    rejects({ envelope: { deniedGrants: 'entity:*:*' } }, 'Governance.InvalidEnvelope');
    rejects({ envelope: { requireStrength: ['entity:*:*'] } }, 'Governance.InvalidEnvelope');
    rejects({ envelope: { quota: 1 } }, 'Governance.UnknownProperty');
    rejects({ envelope: [] }, 'Governance.InvalidEnvelope');
    rejects({}, 'Governance.MissingProperty');
    rejects({ envelope: {}, extra: 1 }, 'Governance.UnknownProperty');
    rejects([], 'Governance.InvalidBody');
  });
});

describe('governance envelope: merge down the chain', () => {
  it('unites denied, intersects allowed, takes the smallest page size and the strongest strength', () => {
    const child = link('child', { deniedGrants: ['entity:Doc:update'], allowedGrants: ['entity:Doc:*', 'entity:Note:read'], maxPageSize: 50, requireStrength: { 'entity:Payment:*': 'mfa-totp', 'entity:Doc:read': 'mfa-totp' } });
    const parent = link('parent', { deniedGrants: ['entity:*:delete'], allowedGrants: ['entity:*:read', 'entity:Doc:update'], maxPageSize: 20, requireStrength: { 'entity:Payment:*': 'mfa-webauthn' } });
    const root = link('root', { maxPageSize: 100 });
    const merged = mergeChain([child, parent, root]);
    assert.deepEqual(new Set(merged.deniedGrants), new Set(['entity:*:delete', 'entity:Doc:update']));
    assert.deepEqual(new Set(merged.allowedGrants), new Set(['entity:Doc:read', 'entity:Doc:update', 'entity:Note:read']));
    assert.equal(merged.maxPageSize, 20);
    assert.deepEqual(merged.requireStrength, { 'entity:Payment:*': 'mfa-webauthn', 'entity:Doc:read': 'mfa-totp' });
  });

  it('leaves allowedGrants absent when no link sets it, and empty when the sets share nothing', () => {
    assert.deepEqual(mergeChain([link('a', { deniedGrants: ['entity:*:delete'] })]), { deniedGrants: ['entity:*:delete'] });
    assert.deepEqual(mergeChain([link('a', { allowedGrants: ['entity:Doc:*'] }), link('b', { allowedGrants: ['entity:Note:*'] })]), { allowedGrants: [] });
    assert.deepEqual(mergeChain([]), {});
  });

  it('intersects pattern lists exactly, without patterns another one covers', () => {
    const p = (xs: string[]) => xs.map((x) => parsePattern(x)!);
    const out = intersectLists(p(['entity:*:*', 'entity:Doc:read']), p(['entity:Doc:*', 'entity:*:read']));
    assert.deepEqual(new Set(out.map((x) => `${x.entity}:${x.verb}`)), new Set(['Doc:*', '*:read']));
  });
});

describe('governance envelope: compiled matchers', () => {
  it('a grant exceeds deniedGrants when anything it covers is denied', () => {
    const e = compiled({ deniedGrants: ['entity:*:delete', 'entity:Secret:*'] });
    for (const g of ['entity:Doc:delete', 'entity:Doc:*', 'entity:*:*', 'entity:*:delete', 'entity:Secret:read', 'entity:*:read']) assert.equal(e.exceeds(g), true, g);
    for (const g of ['entity:Doc:read', 'entity:Doc:update', 'entity:Doc:insert']) assert.equal(e.exceeds(g), false, g);
  });

  it('a grant exceeds allowedGrants when anything it covers lies outside them', () => {
    const e = compiled({ allowedGrants: ['entity:Doc:*', 'entity:*:read'] });
    for (const g of ['entity:Doc:read', 'entity:Doc:*', 'entity:Note:read', 'entity:*:read']) assert.equal(e.exceeds(g), false, g);
    for (const g of ['entity:Note:update', 'entity:Note:*', 'entity:*:update', 'entity:*:*']) assert.equal(e.exceeds(g), true, g);
    assert.equal(compiled({ allowedGrants: [] }).exceeds('entity:Doc:read'), true);
    // The envelope governs entity grants only.
    assert.equal(compiled({ allowedGrants: [], deniedGrants: ['entity:*:*'] }).exceeds('branch:main:approve'), false);
  });

  it('requiredStrength is the strongest of the matching patterns; weaker sessions need a step-up', () => {
    const e = compiled({ requireStrength: { 'entity:Payment:*': 'mfa-totp', 'entity:*:delete': 'mfa-webauthn' } });
    assert.equal(e.requiredStrength('entity:Payment:read'), 'mfa-totp');
    assert.equal(e.requiredStrength('entity:Payment:delete'), 'mfa-webauthn');
    assert.equal(e.requiredStrength('entity:Doc:read'), null);
    assert.equal(weakerThan(undefined, 'mfa-totp'), true);
    assert.equal(weakerThan('password', 'mfa-totp'), true);
    assert.equal(weakerThan('mfa-totp', 'mfa-totp'), false);
    assert.equal(weakerThan('mfa-totp', 'mfa-webauthn'), true);
    assert.equal(weakerThan('mfa-webauthn', 'mfa-totp'), false);
    assert.equal(e.maxPageSize, null);
    assert.equal(compiled({ maxPageSize: 3 }).maxPageSize, 3);
  });
});

describe('governance envelope: stage 3 decision', () => {
  const user = (strength?: AuthStrength): Actor => ({ kind: 'user', label: 'user:u', subjectId: 'u', projectId: 'p', sessionId: 's', roles: [], claims: {}, ...(strength === undefined ? {} : { strength }) });
  const e = compiled({ deniedGrants: ['entity:*:delete'], requireStrength: { 'entity:Payment:*': 'mfa-totp', 'entity:Payment:update': 'mfa-webauthn' } });

  it('denies a required grant past the envelope before asking for a step-up', () => {
    const r = governanceRefusal(e, user(), ['entity:Payment:read', 'entity:Payment:delete'], 'Entity.Payment.Delete');
    assert.equal(r?.reasonCode, 'Governance.EnvelopeExceeded');
    assert.equal(r?.code, 'ACCESS_DENIED');
  });

  it('challenges a weaker session with the strongest strength asked for, and lets a strong enough one through', () => {
    const weak = governanceRefusal(e, user(), ['entity:Payment:read'], 'Entity.Payment.Read');
    assert.equal(weak?.reasonCode, 'Access.StepUpRequired');
    assert.deepEqual([weak?.details.decision, weak?.details.requiredStrength], ['Challenge', 'mfa-totp']);
    assert.equal(governanceRefusal(e, user('password'), ['entity:Payment:read'], 'x')?.details.requiredStrength, 'mfa-totp');
    assert.equal(governanceRefusal(e, user('mfa-totp'), ['entity:Payment:read'], 'x'), null);
    assert.equal(governanceRefusal(e, user('mfa-totp'), ['entity:Payment:update'], 'x')?.details.requiredStrength, 'mfa-webauthn');
    assert.equal(governanceRefusal(e, user('mfa-webauthn'), ['entity:Payment:update'], 'x'), null);
    assert.equal(governanceRefusal(e, user(), ['entity:Doc:read'], 'x'), null);
  });

  it('exempts the platform admin', () => {
    assert.equal(governanceRefusal(e, PLATFORM_ADMIN, ['entity:Payment:delete'], 'x'), null);
    assert.equal(governanceRefusal(e, PLATFORM_ADMIN, ['entity:Payment:read'], 'x'), null);
  });
});
