import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type AuthenticatorTransportFuture, type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { SqlExecutor } from '../../storage/index.js';

/**
 * WebAuthn (passkeys, security keys) as a step-up factor, through
 * @simplewebauthn/server: it checks the client data (type, challenge,
 * origin), the RP id hash, the flags, the COSE key and the signature.
 * Attestation is `none`: we trust the key, not a vendor statement about it.
 * User presence is required; user verification is preferred, not required
 * (the key is the second factor, the password the first).
 */
export interface WebAuthnRelyingParty {
  /** WEBAUTHN_RP_ID: the registrable domain credentials are scoped to. Default `localhost`. */
  readonly rpId: string;
  /** WEBAUTHN_ORIGIN (comma-separated): the web origins whose ceremonies are accepted. Default `http://localhost:<PORT>`. */
  readonly origins: readonly string[];
}

export const DEFAULT_RELYING_PARTY: WebAuthnRelyingParty = { rpId: 'localhost', origins: ['http://localhost:8080'] };

const TIMEOUT_MS = 5 * 60_000;
const TRANSPORTS: readonly string[] = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'];

export interface StoredCredential { id: string; publicKey: Uint8Array; counter: number; transports: AuthenticatorTransportFuture[] }

interface CredentialRow { credential_id: string; public_key: string; sign_count: string | number; transports: unknown }

const transportsOf = (v: unknown): AuthenticatorTransportFuture[] =>
  Array.isArray(v) ? v.filter((t): t is AuthenticatorTransportFuture => typeof t === 'string' && TRANSPORTS.includes(t)) : [];

export async function subjectCredentials(db: SqlExecutor, projectId: string, subjectId: string): Promise<StoredCredential[]> {
  const res = await db.query<CredentialRow>(
    `SELECT credential_id, public_key, sign_count, transports FROM plinth.identity_webauthn_credentials
      WHERE project_id = $1 AND subject_id = $2 ORDER BY created_at, credential_id`,
    [projectId, subjectId],
  );
  return res.rows.map((r) => ({ id: r.credential_id, publicKey: Buffer.from(r.public_key, 'base64url'), counter: Number(r.sign_count), transports: transportsOf(r.transports) }));
}

export function registrationOptions(rp: WebAuthnRelyingParty, rpName: string, subjectId: string, userName: string, existing: StoredCredential[]): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName,
    rpID: rp.rpId,
    userName,
    userID: Buffer.from(subjectId.replace(/-/g, ''), 'hex'),
    attestationType: 'none',
    timeout: TIMEOUT_MS,
    excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** Verifies a registration response against its challenge; the new credential, or null when it does not verify. */
export async function verifiedRegistration(rp: WebAuthnRelyingParty, response: unknown, expectedChallenge: string): Promise<StoredCredential | null> {
  try {
    const r = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      requireUserVerification: false,
    });
    if (!r.verified) return null;
    const c = r.registrationInfo.credential;
    return { id: c.id, publicKey: c.publicKey, counter: c.counter, transports: transportsOf(c.transports) };
  } catch {
    // Malformed or forged input: the library throws with a description; the caller answers 4xx.
    return null;
  }
}

/** Stores a verified credential; false when the credential id is already registered in the project. */
export async function saveCredential(db: SqlExecutor, projectId: string, subjectId: string, c: StoredCredential): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO plinth.identity_webauthn_credentials (project_id, credential_id, subject_id, public_key, sign_count, transports)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (project_id, credential_id) DO NOTHING RETURNING credential_id`,
    [projectId, c.id, subjectId, Buffer.from(c.publicKey).toString('base64url'), c.counter, JSON.stringify(c.transports)],
  );
  return res.rows.length === 1;
}

export function assertionOptions(rp: WebAuthnRelyingParty, credentials: StoredCredential[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.rpId,
    timeout: TIMEOUT_MS,
    userVerification: 'preferred',
    allowCredentials: credentials.map((c) => ({ id: c.id, transports: c.transports })),
  });
}

/**
 * Verifies an assertion by one of the subject's credentials and records its
 * signature counter (compare-and-set: a counter that does not grow, when the
 * authenticator keeps one, is a cloned key and refused by the library).
 */
export async function verifiedAssertion(db: SqlExecutor, rp: WebAuthnRelyingParty, projectId: string, credentials: StoredCredential[], assertion: unknown, expectedChallenge: string): Promise<boolean> {
  const id = typeof assertion === 'object' && assertion !== null ? (assertion as { id?: unknown }).id : undefined;
  const credential = credentials.find((c) => c.id === id);
  if (credential === undefined) return false;
  try {
    const r = await verifyAuthenticationResponse({
      response: assertion as AuthenticationResponseJSON,
      expectedChallenge,
      expectedOrigin: [...rp.origins],
      expectedRPID: rp.rpId,
      credential: { id: credential.id, publicKey: new Uint8Array(credential.publicKey), counter: credential.counter, transports: credential.transports },
      requireUserVerification: false,
    });
    if (!r.verified) return false;
    const updated = await db.query(
      `UPDATE plinth.identity_webauthn_credentials SET sign_count = $3, last_used_at = now()
        WHERE project_id = $1 AND credential_id = $2 AND (sign_count = $4 OR sign_count < $3) RETURNING credential_id`,
      [projectId, credential.id, r.authenticationInfo.newCounter, credential.counter],
    );
    return updated.rows.length === 1;
  } catch {
    return false;
  }
}
