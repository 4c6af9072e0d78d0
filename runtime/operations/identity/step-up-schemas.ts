/**
 * Schemas of the step-up operations (second-factor enrolment and challenges;
 * docs/identity.md "Step-up"), referred to by the contracts in mfa.ts and
 * step-up.ts. The TOTP secret appears in one answer only, the enrolment's (`no-store`).
 */
import { dateTimeSchema, uuidSchema, type Json } from '../../publication/openapi-components.js';
import { defineSchemas } from '../contract/index.js';
import { singleOf, uuidInput } from './identity-schemas.js';

const STRENGTH: Json = { type: 'string', enum: ['mfa-totp', 'mfa-webauthn'] };
const code = (): Json => ({ type: 'string', pattern: '^[0-9]{6}$', description: 'RFC 6238 code: SHA-1, 30 s, 6 digits; each step is accepted once.' });
const webauthnJson = (description: string): Json => ({ type: 'object', description });

/**
 * A proof as the complete and verify bodies take it. Checked by the operation
 * (step-up.ts `proofOf`), not by the schema: its 422s name `proof.kind`,
 * `proof.code`, `proof.assertion`, or the bare name of an unknown property,
 * which a JSON Schema `oneOf` would report differently.
 */
const PROOF: Json = {
  type: 'object',
  description: '`{ "kind": "totp", "code": "123456" }` (6 digits; meets `mfa-totp`) or `{ "kind": "webauthn", "assertion": AuthenticationResponseJSON }` (meets either strength). '
    + 'A proof that is not an object, or whose `kind` is neither, answers 422 `Identity.InvalidProof`; a malformed code 422 `Identity.InvalidCode` (`field` `proof.code`).',
  examples: [{ kind: 'totp', code: '123456' }],
};

export const STEP_UP_SCHEMAS = defineSchemas({
  IdentityEmptyInput: { type: 'object', additionalProperties: false, properties: {}, description: 'No properties; the body may be left out.' },
  IdentityTotpEnrolment: singleOf({
    type: 'object', required: ['secret', 'otpauthUrl'],
    properties: {
      secret: { type: 'string', pattern: '^[A-Z2-7]{32}$', description: 'Base32, 160 bits. Shown once; pending until confirmed.' },
      otpauthUrl: { type: 'string', description: '`otpauth://totp/<issuer>:<account>?secret=…` for a QR code.' },
    },
  }),
  IdentityTotpConfirmInput: { type: 'object', required: ['code'], additionalProperties: false, properties: { code: code() } },
  IdentityMfaConfirmed: singleOf({ type: 'object', required: ['confirmed', 'kind'], properties: { confirmed: { type: 'boolean', const: true }, kind: { type: 'string', const: 'totp' } } }),
  IdentityWebAuthnRegistrationOptions: singleOf({
    type: 'object', required: ['registrationId', 'expiresAt', 'options'],
    properties: { registrationId: uuidSchema(), expiresAt: dateTimeSchema(), options: webauthnJson('PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create()`.') },
  }),
  IdentityWebAuthnRegistrationInput: {
    type: 'object', required: ['registrationId', 'response'], additionalProperties: false,
    properties: { registrationId: uuidInput(), response: webauthnJson('RegistrationResponseJSON (attestation `none` is enough).') },
  },
  IdentityWebAuthnRegistered: singleOf({ type: 'object', required: ['credentialId', 'kind'], properties: { credentialId: { type: 'string' }, kind: { type: 'string', const: 'webauthn' } } }),
  IdentityChallengeInput: {
    type: 'object', required: ['subjectId', 'requireStrength'], additionalProperties: false,
    properties: {
      subjectId: uuidInput(),
      requireStrength: STRENGTH,
      // At most 500 UTF-16 units (checked by the operation; `maxLength` counts code points).
      reason: { type: ['string', 'null'], maxLength: 500 },
    },
  },
  IdentityChallenge: singleOf({
    type: 'object', required: ['challengeId', 'subjectId', 'requireStrength', 'state', 'expiresAt', 'maxAttempts', 'proofKinds'],
    properties: {
      challengeId: uuidSchema(), subjectId: uuidSchema(), requireStrength: STRENGTH, reason: { type: ['string', 'null'] },
      state: { type: 'string', const: 'pending' }, expiresAt: dateTimeSchema(), maxAttempts: { type: 'integer', const: 5 },
      proofKinds: { type: 'array', items: { type: 'string', enum: ['totp', 'webauthn'] }, description: 'The proofs this subject can give that meet the strength.' },
      webauthnOptions: webauthnJson('PublicKeyCredentialRequestOptionsJSON for `navigator.credentials.get()`; present when the subject has WebAuthn credentials.'),
    },
  }),
  IdentityChallengeCompleteInput: { type: 'object', required: ['proof'], additionalProperties: false, properties: { proof: PROOF } },
  IdentityChallengeVerifyInput: { type: 'object', required: ['challengeId', 'proof'], additionalProperties: false, properties: { challengeId: uuidInput(), proof: PROOF } },
});
