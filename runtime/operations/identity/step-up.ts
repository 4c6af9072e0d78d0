/**
 * Step-up challenges (CONTRACT: Authorization → Step-up; decisions in docs/identity.md "Step-up"):
 *   POST /api/identity/challenges                       { subjectId, requireStrength, reason? } → 201 challenge
 *   POST /api/identity/challenges/{challengeId}/complete { proof }                          → 200 elevated session
 *   POST /api/identity/challenge/start                  { subjectId, requireStrength, reason? } → 201 challenge
 *   POST /api/identity/challenge/verify                 { challengeId, proof }               → 200 elevated session
 * proof: { kind: "totp", code } (meets mfa-totp) | { kind: "webauthn", assertion } (meets either).
 */
import { accessDenied, conflict, notFound, ServiceError, unauthorized, validationFailed } from '../../errors/service-error.js';
import {
  CHALLENGE_RATE_WINDOW_SECONDS,
  claimAttempt,
  completeChallenge,
  createChallenge,
  MAX_CHALLENGE_ATTEMPTS,
  MAX_CHALLENGES_PER_WINDOW,
  readChallenge,
  recentChallengeCount,
  type ChallengeRow,
  UUID_RE,
  hasConfirmedTotp,
  useTotpCode,
  assertionOptions,
  subjectCredentials,
  verifiedAssertion,
} from '../../identity/index.js';
import { single } from '../envelopes.js';
import { noGrants, type AuthStrength, type DeclaredSpec, type OperationContext, type OperationSpec, type Result } from '../types.js';
import type { OperationContract } from '../contract/index.js';
import { identityContract } from './contract.js';
import { codeOf, relyingParty, secretsOf } from './mfa.js';
import { openSession } from './register-login.js';
import { IDENTITY_SCHEMAS } from './identity-schemas.js';
import { STEP_UP_SCHEMAS as S } from './step-up-schemas.js';

type Elevated = Exclude<AuthStrength, 'password'>;
const MAX_REASON_LENGTH = 500;

function uuidField(value: unknown, field: string): string {
  if (typeof value !== 'string' || !UUID_RE.test(value)) throw validationFailed('Identity.InvalidBody', `${field} must be a uuid`, field);
  return value.toLowerCase();
}

/** Which proof kinds meet a strength: WebAuthn meets both, TOTP only mfa-totp. */
const proofKindsFor = (s: Elevated): Array<'totp' | 'webauthn'> => (s === 'mfa-totp' ? ['totp', 'webauthn'] : ['webauthn']);

async function startChallenge(ctx: OperationContext): Promise<Result> {
  // Shape checked by IdentityChallengeInput (step-up-schemas.ts).
  const body = ctx.inv.body as { subjectId: string; requireStrength: Elevated; reason?: string | null };
  const subjectId = body.subjectId.toLowerCase();
  const strength = body.requireStrength;
  // In UTF-16 units, as before; the schema's maxLength counts code points.
  if (typeof body.reason === 'string' && body.reason.length > MAX_REASON_LENGTH) {
    throw validationFailed('Identity.InvalidBody', `reason must be a string of at most ${MAX_REASON_LENGTH} characters`, 'reason');
  }
  const { actor } = ctx;
  // A user steps up only itself; the platform admin may start one for any subject of the project
  // (completing it still takes that subject's factor).
  if (actor.kind !== 'admin' && actor.subjectId !== subjectId) throw accessDenied('Identity.ChallengeSubjectMismatch', 'a user may start a challenge only for its own subject');
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  const active = (await db.query('SELECT 1 FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2 AND state = \'active\'', [subjectId, projectId])).rows.length === 1;
  if (!active) throw notFound('Identity.SubjectNotFound', 'no active subject with this id in the project');
  if ((await recentChallengeCount(db, projectId, subjectId)) >= MAX_CHALLENGES_PER_WINDOW) {
    throw new ServiceError('QUOTA_EXCEEDED', 'Identity.TooManyChallenges', `at most ${MAX_CHALLENGES_PER_WINDOW} challenges per subject every ${CHALLENGE_RATE_WINDOW_SECONDS / 60} minutes`, {
      retryable: true, headers: { 'Retry-After': String(CHALLENGE_RATE_WINDOW_SECONDS) },
    });
  }
  const kinds = proofKindsFor(strength as Elevated);
  const available: Array<'totp' | 'webauthn'> = [];
  if (kinds.includes('totp') && (await hasConfirmedTotp(db, projectId, subjectId))) available.push('totp');
  const credentials = await subjectCredentials(db, projectId, subjectId);
  const webauthnOptions = credentials.length > 0 ? await assertionOptions(relyingParty(ctx), credentials) : undefined;
  if (webauthnOptions !== undefined) available.push('webauthn');
  const reason = typeof body.reason === 'string' ? body.reason : null;
  const row = await createChallenge(db, {
    projectId, subjectId, purpose: 'step-up', requireStrength: strength, reason,
    startedSessionId: actor.kind === 'user' ? actor.sessionId : null, webauthnChallenge: webauthnOptions?.challenge ?? null,
  });
  return single(ctx, {
    challengeId: row.id, subjectId, requireStrength: strength, reason, state: 'pending', expiresAt: new Date(row.expires_at).toISOString(),
    maxAttempts: MAX_CHALLENGE_ATTEMPTS, proofKinds: available, ...(webauthnOptions === undefined ? {} : { webauthnOptions }),
  }, 201, { 'Cache-Control': 'no-store' });
}

/** A proof's own keys: 422 `Identity.UnknownProperty` naming the key alone (not `proof.<key>`), as clients have seen it. */
function refuseUnknown(p: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(p)) {
    if (!allowed.includes(k)) throw validationFailed('Identity.UnknownProperty', `unknown property '${k.slice(0, 64)}'`, k.slice(0, 64));
  }
}

type Proof = { kind: 'totp'; code: string } | { kind: 'webauthn'; assertion: Record<string, unknown> };

function proofOf(value: unknown): Proof {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw validationFailed('Identity.InvalidProof', 'proof must be an object with a kind', 'proof');
  const p = value as Record<string, unknown>;
  if (p.kind === 'totp') {
    refuseUnknown(p, ['kind', 'code']);
    return { kind: 'totp', code: codeOf(p.code, 'proof.code') };
  }
  if (p.kind === 'webauthn') {
    refuseUnknown(p, ['kind', 'assertion']);
    const a = p.assertion;
    if (typeof a !== 'object' || a === null || Array.isArray(a)) throw validationFailed('Identity.InvalidProof', 'proof.assertion must be the AuthenticationResponseJSON of navigator.credentials.get()', 'proof.assertion');
    return { kind: 'webauthn', assertion: a as Record<string, unknown> };
  }
  throw validationFailed('Identity.InvalidProof', 'proof.kind must be totp or webauthn', 'proof.kind');
}

const challengeNotFound = (): ServiceError => notFound('Identity.ChallengeNotFound', 'no challenge with this id');

/** Why a challenge takes no more proofs. */
function closed(row: ChallengeRow): ServiceError {
  if (row.state === 'completed') return conflict('Identity.ChallengeCompleted', 'this challenge was already completed');
  if (row.attempts >= MAX_CHALLENGE_ATTEMPTS) return accessDenied('Identity.ChallengeExhausted', `${MAX_CHALLENGE_ATTEMPTS} wrong proofs: this challenge is dead; start a new one`);
  return accessDenied('Identity.ChallengeExpired', 'this challenge has expired; start a new one');
}

async function completeWith(ctx: OperationContext, rawId: unknown, rawProof: unknown): Promise<Result> {
  const challengeId = uuidField(rawId, 'challengeId');
  const proof = proofOf(rawProof);
  const { actor } = ctx;
  const db = ctx.services.db;
  const projectId = ctx.scope!.project.id;
  if (actor.kind === 'apikey') throw accessDenied('Identity.UserTokenRequired', 'an API key cannot complete a step-up challenge');
  const row = await readChallenge(db, projectId, challengeId, 'step-up');
  // Another user's challenge reads as an unknown one.
  if (row === undefined || (actor.kind === 'user' && actor.subjectId !== row.subject_id)) throw challengeNotFound();
  if (row.state !== 'pending' || row.expired || row.attempts >= MAX_CHALLENGE_ATTEMPTS) throw closed(row);
  const required = row.require_strength as Elevated;
  if (!proofKindsFor(required).includes(proof.kind)) {
    throw accessDenied('Identity.ProofTooWeak', `a ${proof.kind} proof does not meet ${required}`, { decision: 'Challenge', requiredStrength: required });
  }
  // The session that started the challenge is its first factor: revoked or ended, the challenge is void.
  if (row.started_session_id !== null) {
    const live = (await db.query(
      'SELECT 1 FROM plinth.identity_sessions WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL AND expires_at > now()', [row.started_session_id, projectId],
    )).rows.length === 1;
    if (!live) throw unauthorized('Identity.ChallengeSessionEnded', 'the session that started this challenge has ended');
  }
  const claimed = await claimAttempt(db, projectId, challengeId);
  if (claimed === null) throw closed((await readChallenge(db, projectId, challengeId, 'step-up')) ?? row);
  const ok = proof.kind === 'totp'
    ? await useTotpCode(db, secretsOf(ctx), projectId, row.subject_id, proof.code)
    : claimed.webauthn_challenge !== null && await verifiedAssertion(db, relyingParty(ctx), projectId, await subjectCredentials(db, projectId, row.subject_id), proof.assertion, claimed.webauthn_challenge);
  if (!ok) {
    const left = MAX_CHALLENGE_ATTEMPTS - claimed.attempts;
    throw accessDenied('Identity.InvalidProof', `the proof is wrong, expired or already used; ${left} attempt(s) left`);
  }
  if (!(await completeChallenge(db, projectId, challengeId))) throw conflict('Identity.ChallengeCompleted', 'this challenge was already completed');
  const subject = (await db.query<{ claims: unknown }>(
    'SELECT claims FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2 AND state = \'active\'', [row.subject_id, projectId],
  )).rows[0];
  if (subject === undefined) throw unauthorized('Identity.SubjectNotFound', 'the account behind this challenge no longer exists');
  // The strength reached is the proof's, not just the one asked for: a WebAuthn proof gives mfa-webauthn.
  return openSession(ctx, row.subject_id, subject.claims, proof.kind === 'webauthn' ? 'mfa-webauthn' : 'mfa-totp');
}

const spec = (id: string, authn: OperationSpec['authn'], contract: OperationContract, execute: OperationSpec['execute']): DeclaredSpec => ({ id, authn, scope: 'project', grants: noGrants, contract, execute });

const START_REASONS = { prefix: 'Identity', order: 'properties', fields: { subjectId: 'Identity.InvalidBody', requireStrength: 'Identity.InvalidStrength', reason: 'Identity.InvalidBody' } } as const;
const COMPLETE = 'Open (scope headers only): the challenge id stands for the first factor; a bearer, if sent, must be the subject\'s. Answers login\'s token pair, the access token carrying `strength` (and `strength_exp`). 5 wrong proofs kill the challenge.';
const START_ERRORS = [401, 403, 404, 422, 429];
const COMPLETE_ERRORS = [401, 403, 404, 409, 422];
const startContract = (summary: string, path: string): OperationContract => identityContract({
  summary, routes: [{ method: 'POST', path }], body: S.IdentityChallengeInput, reasons: START_REASONS,
  output: { status: 201, body: S.IdentityChallenge, noStore: true }, errors: START_ERRORS,
});

export const createChallengeSpec = spec('Identity.Challenges.Create', 'user', startContract('Start a step-up challenge (a user for itself; the admin for any subject)', 'identity/challenges'), startChallenge);
export const startChallengeSpec = spec('Identity.Challenge.Start', 'user', startContract('Alias form of POST /identity/challenges', 'identity/challenge/start'), startChallenge);
/** Public: the challenge id (returned only to whoever started it) stands for the first factor, as Auth0's mfa_token does; a token, if presented, must be the subject's. */
export const completeChallengeSpec = spec('Identity.Challenges.Complete', 'public', identityContract({
  summary: 'Complete a step-up challenge: an elevated session', description: COMPLETE,
  routes: [{ method: 'POST', path: 'identity/challenges/:challengeId/complete' }],
  params: { challengeId: { description: 'Challenge id.', schema: { type: 'string', format: 'uuid' } } },
  body: S.IdentityChallengeCompleteInput, reasons: { prefix: 'Identity', fields: { proof: 'Identity.InvalidProof' } },
  output: { status: 200, body: IDENTITY_SCHEMAS.IdentityTokens, noStore: true }, errors: COMPLETE_ERRORS,
}), (ctx) => {
  const id = ctx.inv.params.challengeId ?? '';
  if (!UUID_RE.test(id)) throw challengeNotFound();
  return completeWith(ctx, id, (ctx.inv.body as { proof: unknown }).proof);
});
export const verifyChallengeSpec = spec('Identity.Challenge.Verify', 'public', identityContract({
  summary: 'Alias form of POST /identity/challenges/{challengeId}/complete', description: COMPLETE,
  routes: [{ method: 'POST', path: 'identity/challenge/verify' }],
  body: S.IdentityChallengeVerifyInput, reasons: { prefix: 'Identity', order: 'properties', fields: { challengeId: 'Identity.InvalidBody', proof: 'Identity.InvalidProof' } },
  output: { status: 200, body: IDENTITY_SCHEMAS.IdentityTokens, noStore: true }, errors: COMPLETE_ERRORS,
}), (ctx) => {
  const body = ctx.inv.body as { challengeId: string; proof: unknown };
  return completeWith(ctx, body.challengeId, body.proof);
});

export const STEP_UP_SPECS = {
  'Identity.Challenges.Create': createChallengeSpec,
  'Identity.Challenges.Complete': completeChallengeSpec,
  'Identity.Challenge.Start': startChallengeSpec,
  'Identity.Challenge.Verify': verifyChallengeSpec,
} as const satisfies Record<string, OperationSpec>;
