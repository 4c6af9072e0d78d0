/**
 * A software WebAuthn authenticator for tests: a P-256 key made with
 * node:crypto, `none` attestation (authenticator data with attested
 * credential data and a COSE key, CBOR-encoded by hand), and ES256-signed
 * assertions, exactly as a browser would hand them to the server
 * (RegistrationResponseJSON / AuthenticationResponseJSON).
 */
import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [k: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) { const b = Buffer.alloc(3); b[0] = (major << 5) | 25; b.writeUInt16BE(n, 1); return b; }
  const b = Buffer.alloc(5); b[0] = (major << 5) | 26; b.writeUInt32BE(n, 1); return b;
}

/** Minimal CBOR encoder (RFC 8949): integers, byte and text strings, arrays, maps. */
export function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') { const b = Buffer.from(v, 'utf8'); return Buffer.concat([head(3, b.length), b]); }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cbor)]);
  const entries: Array<[Cbor, Cbor]> = v instanceof Map ? [...v.entries()] : Object.entries(v);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

const b64u = (b: Uint8Array | string): string => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface AuthenticatorOptions { rpId: string; origin: string }

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  signCount = 0;

  constructor(private readonly opts: AuthenticatorOptions) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
  }

  get id(): string { return b64u(this.credentialId); }

  /** The COSE_Key of the credential: EC2, ES256, P-256. */
  coseKey(): Buffer {
    return cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(this.publicJwk.x, 'base64url')], [-3, Buffer.from(this.publicJwk.y, 'base64url')]]));
  }

  private authData(flags: number, attested: boolean, rpId = this.opts.rpId): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.signCount);
    const parts = [sha256(rpId), Buffer.from([flags | (attested ? FLAG_AT : 0)]), count];
    if (attested) {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(this.credentialId.length);
      parts.push(Buffer.alloc(16), len, this.credentialId, this.coseKey());
    }
    return Buffer.concat(parts);
  }

  /** navigator.credentials.create() for the server's registration options (`challenge` from them). */
  register(challenge: string, over: { origin?: string; rpId?: string; type?: string } = {}): Record<string, unknown> {
    const clientDataJSON = JSON.stringify({ type: over.type ?? 'webauthn.create', challenge, origin: over.origin ?? this.opts.origin, crossOrigin: false });
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData: this.authData(FLAG_UP | FLAG_UV, true, over.rpId) });
    return {
      id: this.id, rawId: this.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'cross-platform',
      response: { clientDataJSON: b64u(clientDataJSON), attestationObject: b64u(attestationObject), transports: ['usb'] },
    };
  }

  /** navigator.credentials.get() for the server's request options; the counter moves on. */
  assert(challenge: string, over: { origin?: string; rpId?: string; signWith?: KeyObject } = {}): Record<string, unknown> {
    this.signCount += 1;
    const clientDataJSON = JSON.stringify({ type: 'webauthn.get', challenge, origin: over.origin ?? this.opts.origin, crossOrigin: false });
    const authenticatorData = this.authData(FLAG_UP | FLAG_UV, false, over.rpId);
    const signature = createSign('sha256').update(Buffer.concat([authenticatorData, sha256(clientDataJSON)])).sign(over.signWith ?? this.privateKey);
    return {
      id: this.id, rawId: this.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'cross-platform',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authenticatorData), signature: b64u(signature) },
    };
  }
}
