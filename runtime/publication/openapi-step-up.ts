/**
 * Step-up routes (second-factor enrolment and challenges; docs/identity.md
 * "Step-up"). Registered by openapi-static.ts. The TOTP secret appears in
 * one answer only, the enrolment's (`no-store`).
 */
import { dateTimeSchema, schemaRef, singleEnvelope, uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export const STEP_UP_SCHEMA_NAMES = [
  'IdentityTotpEnrolment', 'IdentityTotpConfirmInput', 'IdentityMfaConfirmed', 'IdentityWebAuthnRegistrationOptions', 'IdentityWebAuthnRegistrationInput', 'IdentityWebAuthnRegistered',
  'IdentityChallengeInput', 'IdentityChallenge', 'IdentityChallengeProof', 'IdentityChallengeCompleteInput', 'IdentityChallengeVerifyInput',
] as const;

const STRENGTH = { type: 'string', enum: ['mfa-totp', 'mfa-webauthn'] };
const code = (): Json => ({ type: 'string', pattern: '^[0-9]{6}$', description: 'RFC 6238 code: SHA-1, 30 s, 6 digits; each step is accepted once.' });
const webauthnJson = (description: string): Json => ({ type: 'object', description });

export function stepUpSchemas(): Json {
  return {
    IdentityTotpEnrolment: singleEnvelope({
      type: 'object', required: ['secret', 'otpauthUrl'],
      properties: {
        secret: { type: 'string', pattern: '^[A-Z2-7]{32}$', description: 'Base32, 160 bits. Shown once; pending until confirmed.' },
        otpauthUrl: { type: 'string', description: '`otpauth://totp/<issuer>:<account>?secret=…` for a QR code.' },
      },
    }),
    IdentityTotpConfirmInput: { type: 'object', required: ['code'], additionalProperties: false, properties: { code: code() } },
    IdentityMfaConfirmed: singleEnvelope({ type: 'object', required: ['confirmed', 'kind'], properties: { confirmed: { type: 'boolean', const: true }, kind: { type: 'string', const: 'totp' } } }),
    IdentityWebAuthnRegistrationOptions: singleEnvelope({
      type: 'object', required: ['registrationId', 'expiresAt', 'options'],
      properties: { registrationId: uuidSchema(), expiresAt: dateTimeSchema(), options: webauthnJson('PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()`.') },
    }),
    IdentityWebAuthnRegistrationInput: {
      type: 'object', required: ['registrationId', 'response'], additionalProperties: false,
      properties: { registrationId: uuidSchema(), response: webauthnJson('RegistrationResponseJSON (attestation `none` is enough).') },
    },
    IdentityWebAuthnRegistered: singleEnvelope({ type: 'object', required: ['credentialId', 'kind'], properties: { credentialId: { type: 'string' }, kind: { type: 'string', const: 'webauthn' } } }),
    IdentityChallengeInput: {
      type: 'object', required: ['subjectId', 'requireStrength'], additionalProperties: false,
      properties: { subjectId: uuidSchema(), requireStrength: STRENGTH, reason: { type: ['string', 'null'], maxLength: 500 } },
    },
    IdentityChallenge: singleEnvelope({
      type: 'object', required: ['challengeId', 'subjectId', 'requireStrength', 'state', 'expiresAt', 'maxAttempts', 'proofKinds'],
      properties: {
        challengeId: uuidSchema(), subjectId: uuidSchema(), requireStrength: STRENGTH, reason: { type: ['string', 'null'] },
        state: { type: 'string', const: 'pending' }, expiresAt: dateTimeSchema(), maxAttempts: { type: 'integer', const: 5 },
        proofKinds: { type: 'array', items: { type: 'string', enum: ['totp', 'webauthn'] }, description: 'The proofs this subject can give that meet the strength.' },
        webauthnOptions: webauthnJson('PublicKeyCredentialRequestOptionsJSON for `navigator.credentials.get()`; present when the subject has WebAuthn credentials.'),
      },
    }),
    IdentityChallengeProof: {
      oneOf: [
        { type: 'object', required: ['kind', 'code'], additionalProperties: false, properties: { kind: { type: 'string', const: 'totp' }, code: code() } },
        { type: 'object', required: ['kind', 'assertion'], additionalProperties: false, properties: { kind: { type: 'string', const: 'webauthn' }, assertion: webauthnJson('AuthenticationResponseJSON.') } },
      ],
    },
    IdentityChallengeCompleteInput: { type: 'object', required: ['proof'], additionalProperties: false, properties: { proof: schemaRef('IdentityChallengeProof') } },
    IdentityChallengeVerifyInput: { type: 'object', required: ['challengeId', 'proof'], additionalProperties: false, properties: { challengeId: uuidSchema(), proof: schemaRef('IdentityChallengeProof') } },
  };
}

export function stepUpParameters(): Json {
  return { ChallengeId: { name: 'challengeId', in: 'path', required: true, description: 'Challenge id.', schema: uuidSchema() } };
}

const TAG = 'Identity';
const COMPLETE = 'Open (scope headers only): the challenge id stands for the first factor; a bearer, if sent, must be the subject\'s. Answers login\'s token pair, the access token carrying `strength` (and `strength_exp`). 5 wrong proofs kill the challenge.';

export const STEP_UP_OPS: StaticOp[] = [
  { method: 'post', path: '/identity/mfa/totp', operationId: 'Identity.Mfa.Totp.Enrol', tag: TAG, summary: 'Start TOTP enrolment of the calling user (replacing a factor needs an elevated token)', status: 201, response: 'IdentityTotpEnrolment', noStore: true, errors: [401, 403, 422] },
  { method: 'post', path: '/identity/mfa/totp/confirm', operationId: 'Identity.Mfa.Totp.Confirm', tag: TAG, summary: 'Confirm TOTP enrolment with a first code', body: 'IdentityTotpConfirmInput', status: 200, response: 'IdentityMfaConfirmed', errors: [401, 403, 409, 422] },
  { method: 'post', path: '/identity/mfa/webauthn/registration/options', operationId: 'Identity.Mfa.WebAuthn.RegistrationOptions', tag: TAG, summary: 'WebAuthn registration options for the calling user', status: 201, response: 'IdentityWebAuthnRegistrationOptions', noStore: true, errors: [401, 403, 422] },
  { method: 'post', path: '/identity/mfa/webauthn/registration/verify', operationId: 'Identity.Mfa.WebAuthn.RegistrationVerify', tag: TAG, summary: 'Register a WebAuthn credential', body: 'IdentityWebAuthnRegistrationInput', status: 201, response: 'IdentityWebAuthnRegistered', errors: [401, 403, 404, 409, 422] },
  { method: 'post', path: '/identity/challenges', operationId: 'Identity.Challenges.Create', tag: TAG, summary: 'Start a step-up challenge (a user for itself; the admin for any subject)', body: 'IdentityChallengeInput', status: 201, response: 'IdentityChallenge', noStore: true, errors: [401, 403, 404, 422, 429] },
  { method: 'post', path: '/identity/challenges/{challengeId}/complete', operationId: 'Identity.Challenges.Complete', tag: TAG, open: true, summary: 'Complete a step-up challenge: an elevated session', description: COMPLETE, params: ['ChallengeId'], body: 'IdentityChallengeCompleteInput', status: 200, response: 'IdentityTokens', noStore: true, errors: [401, 403, 404, 409, 422] },
  { method: 'post', path: '/identity/challenge/start', operationId: 'Identity.Challenge.Start', tag: TAG, summary: 'Alias form of POST /identity/challenges', body: 'IdentityChallengeInput', status: 201, response: 'IdentityChallenge', noStore: true, errors: [401, 403, 404, 422, 429] },
  { method: 'post', path: '/identity/challenge/verify', operationId: 'Identity.Challenge.Verify', tag: TAG, open: true, summary: 'Alias form of POST /identity/challenges/{challengeId}/complete', description: COMPLETE, body: 'IdentityChallengeVerifyInput', status: 200, response: 'IdentityTokens', noStore: true, errors: [401, 403, 404, 409, 422] },
];
