/** Test helpers for step-up: a registered user with a session, and an authenticator app that never reuses a step. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { base32Decode, hotp, totpStep } from '../../runtime/identity/index.js';
import type { Client } from './client.js';
import { expectStatus, type Json } from './expect.js';

export const PASSWORD = 'long enough pw';

export interface TestUser { subjectId: string; email: string; token: string; as: Client; anon: Client }

/** Registers and logs in a fresh user of the client's project. */
export async function newUser(projectClient: Client): Promise<TestUser> {
  const anon = projectClient.with({ token: null });
  const email = `${randomUUID()}@example.com`;
  const reg = await anon.post('/api/identity/register', { email, password: PASSWORD });
  expectStatus(reg, 201);
  const login = await anon.post('/api/identity/login', { email, password: PASSWORD });
  expectStatus(login, 200);
  return { subjectId: reg.body.data.subjectId, email, token: login.body.accessToken, as: anon.with({ token: login.body.accessToken }), anon };
}

/** An authenticator app holding one secret: each code it gives is for a step after the last one it gave. */
export class TotpApp {
  private readonly key: Buffer;
  private last = -Infinity;

  constructor(secret: string) {
    const key = base32Decode(secret);
    assert.ok(key !== null, 'secret is base32');
    this.key = key;
  }

  /** A fresh valid code: the earliest step within ±1 of now after the last one handed out. */
  code(): string {
    const now = totpStep(Date.now());
    const step = Math.max(now - 1, this.last + 1);
    assert.ok(step <= now + 1, 'out of fresh steps in the window: use another subject');
    this.last = step;
    return hotp(this.key, step);
  }

  /** A code that is certainly wrong now (two steps away, beyond the window). */
  wrongCode(): string {
    return hotp(this.key, totpStep(Date.now()) + 5);
  }
}

/** Enrols and confirms TOTP for the user; the app has spent one step. */
export async function enrolTotp(user: TestUser): Promise<TotpApp> {
  const r = await user.as.post('/api/identity/mfa/totp', {});
  expectStatus(r, 201);
  const app = new TotpApp(r.body.data.secret);
  expectStatus(await user.as.post('/api/identity/mfa/totp/confirm', { code: app.code() }), 200);
  return app;
}

/** The payload of a JWT, unverified (what the test asserts the server put there). */
export function jwtPayload(token: string): Json {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}
