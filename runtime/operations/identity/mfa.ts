/**
 * Second-factor enrolment of the calling user (decisions in docs/identity.md "Step-up"):
 *   POST /api/identity/mfa/totp                            → 201 { secret, otpauthUrl } (pending until confirmed)
 *   POST /api/identity/mfa/totp/confirm         { code }    → 200 { confirmed: true }
 *   POST /api/identity/mfa/webauthn/registration/options    → 201 { registrationId, options }
 *   POST /api/identity/mfa/webauthn/registration/verify { registrationId, response } → 201 { credentialId }
 * A subject that already has a confirmed factor needs an elevated token to
 * add or replace one: otherwise a stolen password session could enrol the
 * thief's own authenticator and then step up with it.
 */
import { accessDenied, conflict, notFound, ServiceError, validationFailed } from '../../errors/service-error.js';
import {
  claimAttempt,
  completeChallenge,
  createChallenge,
  readChallenge,
  identityPolicy,
  newTotpSecret,
  otpauthUrl,
  confirmPendingTotp,
  hasConfirmedTotp,
  putPendingTotp,
  DEFAULT_RELYING_PARTY,
  registrationOptions,
  saveCredential,
  subjectCredentials,
  verifiedRegistration,
  type WebAuthnRelyingParty,
} from '../../identity/index.js';
import type { SecretStore } from '../../secrets/index.js';
import { single } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext, type OperationSpec } from '../types.js';
import { identityContract } from './contract.js';
import { userSubject } from './sessions.js';
import { STEP_UP_SCHEMAS as S } from './step-up-schemas.js';

/** The platform secret store (it runs with the webhook machinery); without it MFA answers 503. */
export function secretsOf(ctx: OperationContext): SecretStore {
  const secrets = ctx.services.webhooks?.secrets;
  if (secrets === undefined) throw new ServiceError('UNAVAILABLE', 'Identity.MfaUnavailable', 'the platform secret store is not running on this node');
  return secrets;
}

export const relyingParty = (ctx: OperationContext): WebAuthnRelyingParty => identityPolicy(ctx.services).webauthn ?? DEFAULT_RELYING_PARTY;

/** Whether the subject has any confirmed second factor. */
export async function hasAnyFactor(ctx: OperationContext, subjectId: string): Promise<boolean> {
  const projectId = ctx.scope!.project.id;
  return (await hasConfirmedTotp(ctx.services.db, projectId, subjectId)) || (await subjectCredentials(ctx.services.db, projectId, subjectId)).length > 0;
}

/** Refuses enrolment with a password-strength token once the subject has a factor (CONTRACT's step-up answer shape). */
async function requireElevationIfEnrolled(ctx: OperationContext, subjectId: string): Promise<void> {
  if ((ctx.actor.strength ?? 'password') !== 'password') return;
  if (!(await hasAnyFactor(ctx, subjectId))) return;
  throw accessDenied('Access.StepUpRequired', 'this subject already has a second factor: complete a step-up challenge to add or replace one', {
    decision: 'Challenge', requiredStrength: 'mfa-totp',
  });
}

/** The account name an authenticator shows: the subject's e-mail, else its id. */
async function accountName(ctx: OperationContext, subjectId: string): Promise<string> {
  const row = (await ctx.services.db.query<{ email: string | null }>(
    'SELECT email FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2', [subjectId, ctx.scope!.project.id],
  )).rows[0];
  return row?.email ?? subjectId;
}

const noStore = { 'Cache-Control': 'no-store' };

export const enrolTotpSpec: DeclaredSpec = {
  id: 'Identity.Mfa.Totp.Enrol',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Start TOTP enrolment of the calling user (replacing a factor needs an elevated token)',
    routes: [{ method: 'POST', path: 'identity/mfa/totp' }],
    body: S.IdentityEmptyInput, bodyOptional: true, reasons: { prefix: 'Identity' },
    output: { status: 201, body: S.IdentityTotpEnrolment, noStore: true },
    errors: [401, 403, 422],
  }),
  async execute(ctx) {
    const subjectId = userSubject(ctx);
    await requireElevationIfEnrolled(ctx, subjectId);
    const project = ctx.scope!.project;
    const secret = newTotpSecret();
    await putPendingTotp(ctx.services.db, secretsOf(ctx), project.id, subjectId, secret);
    // The one answer that carries the secret; it is never logged nor returned again.
    return single(ctx, { secret, otpauthUrl: otpauthUrl(secret, project.name || 'Plinth', await accountName(ctx, subjectId)) }, 201, noStore);
  },
};

export function codeOf(value: unknown, field: string): string {
  if (typeof value !== 'string' || !/^[0-9]{6}$/.test(value)) throw validationFailed('Identity.InvalidCode', `${field} must be a 6-digit string`, field);
  return value;
}

export const confirmTotpSpec: DeclaredSpec = {
  id: 'Identity.Mfa.Totp.Confirm',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Confirm TOTP enrolment with a first code',
    routes: [{ method: 'POST', path: 'identity/mfa/totp/confirm' }],
    body: S.IdentityTotpConfirmInput, reasons: { prefix: 'Identity', fields: { code: 'Identity.InvalidCode' } },
    output: { status: 200, body: S.IdentityMfaConfirmed },
    errors: [401, 403, 409, 422],
  }),
  async execute(ctx) {
    const subjectId = userSubject(ctx);
    const { code } = ctx.inv.body as { code: string };
    const outcome = await confirmPendingTotp(ctx.services.db, secretsOf(ctx), ctx.scope!.project.id, subjectId, code);
    if (outcome === 'no-pending') throw conflict('Identity.NoPendingTotp', 'no TOTP enrolment is waiting for confirmation; start one with POST /api/identity/mfa/totp');
    if (outcome === 'wrong-code') throw accessDenied('Identity.InvalidCode', 'the code is wrong, expired or already used');
    return single(ctx, { confirmed: true, kind: 'totp' });
  },
};

export const webauthnRegistrationOptionsSpec: DeclaredSpec = {
  id: 'Identity.Mfa.WebAuthn.RegistrationOptions',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'WebAuthn registration options for the calling user',
    routes: [{ method: 'POST', path: 'identity/mfa/webauthn/registration/options' }],
    body: S.IdentityEmptyInput, bodyOptional: true, reasons: { prefix: 'Identity' },
    output: { status: 201, body: S.IdentityWebAuthnRegistrationOptions, noStore: true },
    errors: [401, 403, 422],
  }),
  async execute(ctx) {
    const subjectId = userSubject(ctx);
    await requireElevationIfEnrolled(ctx, subjectId);
    const project = ctx.scope!.project;
    const existing = await subjectCredentials(ctx.services.db, project.id, subjectId);
    const options = await registrationOptions(relyingParty(ctx), project.name || 'Plinth', subjectId, await accountName(ctx, subjectId), existing);
    const row = await createChallenge(ctx.services.db, {
      projectId: project.id, subjectId, purpose: 'webauthn-registration', startedSessionId: ctx.actor.sessionId, webauthnChallenge: options.challenge,
    });
    return single(ctx, { registrationId: row.id, expiresAt: new Date(row.expires_at).toISOString(), options }, 201, noStore);
  },
};

const registrationNotFound = (): ServiceError => notFound('Identity.RegistrationNotFound', 'no pending WebAuthn registration with this id');

export const webauthnRegistrationVerifySpec: DeclaredSpec = {
  id: 'Identity.Mfa.WebAuthn.RegistrationVerify',
  authn: 'user',
  scope: 'project',
  grants: noGrants,
  contract: identityContract({
    summary: 'Register a WebAuthn credential',
    routes: [{ method: 'POST', path: 'identity/mfa/webauthn/registration/verify' }],
    body: S.IdentityWebAuthnRegistrationInput,
    reasons: { prefix: 'Identity', order: 'properties', fields: { registrationId: 'Identity.InvalidBody', response: 'Identity.InvalidBody' } },
    output: { status: 201, body: S.IdentityWebAuthnRegistered },
    errors: [401, 403, 404, 409, 422],
  }),
  async execute(ctx) {
    const subjectId = userSubject(ctx);
    const body = ctx.inv.body as { registrationId: string; response: Record<string, unknown> };
    const db = ctx.services.db;
    const projectId = ctx.scope!.project.id;
    const id = body.registrationId.toLowerCase();
    const pending = await readChallenge(db, projectId, id, 'webauthn-registration');
    // Another subject's registration reads as an unknown one.
    if (pending === undefined || pending.subject_id !== subjectId) throw registrationNotFound();
    const claimed = await claimAttempt(db, projectId, id);
    if (claimed === null) throw accessDenied('Identity.RegistrationClosed', 'this registration is completed, expired or out of attempts; start a new one');
    const credential = await verifiedRegistration(relyingParty(ctx), body.response, claimed.webauthn_challenge ?? '');
    if (credential === null) throw accessDenied('Identity.InvalidAttestation', 'the registration response does not verify (challenge, origin, RP id or key)');
    if (!(await completeChallenge(db, projectId, id))) throw accessDenied('Identity.RegistrationClosed', 'this registration was completed by another request');
    if (!(await saveCredential(db, projectId, subjectId, credential))) throw conflict('Identity.CredentialExists', 'this credential is already registered');
    return single(ctx, { credentialId: credential.id, kind: 'webauthn' }, 201);
  },
};

export const MFA_SPECS = {
  'Identity.Mfa.Totp.Enrol': enrolTotpSpec,
  'Identity.Mfa.Totp.Confirm': confirmTotpSpec,
  'Identity.Mfa.WebAuthn.RegistrationOptions': webauthnRegistrationOptionsSpec,
  'Identity.Mfa.WebAuthn.RegistrationVerify': webauthnRegistrationVerifySpec,
} as const satisfies Record<string, OperationSpec>;
