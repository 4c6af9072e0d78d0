import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import {
  parseClaims,
  existingProjectSigningKey,
  projectSigningKey,
  RevokedSessions,
  SqlGrantSource,
  ACCESS_TOKEN_TTL_SECONDS,
  JwtTokenVerifier,
  newRefreshToken,
  parseRefreshToken,
  refreshTokenHash,
  refreshTokenIssuedBy,
  signAccessToken,
} from '../../runtime/identity/index.js';
import { PgliteClient, migratePlatform, type SqlClient } from '../../storage/index.js';

let db: SqlClient;
const tenantId = randomUUID();
const projectA = randomUUID();
const projectB = randomUUID();

before(async () => {
  db = await PgliteClient.open(undefined);
  await migratePlatform(db);
  await db.query('INSERT INTO plinth.tenants (id, slug, name) VALUES ($1, $2, $3)', [tenantId, 'acme', 'Acme']);
  for (const [id, slug] of [[projectA, 'a'], [projectB, 'b']]) {
    await db.query('INSERT INTO plinth.projects (id, tenant_id, slug, name) VALUES ($1, $2, $3, $3)', [id, tenantId, slug]);
  }
});
after(async () => { await db.close(); });

const claims = (projectId = projectA) => ({ projectId, subjectId: randomUUID(), sessionId: randomUUID() });

/** Claims of a session that exists (the verifier checks the session row). */
async function liveClaims(projectId = projectA) {
  const c = claims(projectId);
  await db.query("INSERT INTO plinth.identity_subjects (id, project_id, email, password_hash) VALUES ($1, $2, $3, 'x')", [c.subjectId, projectId, `${c.subjectId}@example.com`]);
  await db.query("INSERT INTO plinth.identity_sessions (id, project_id, subject_id, refresh_hash, expires_at) VALUES ($1, $2, $3, 'x', now() + interval '1 day')", [c.sessionId, projectId, c.subjectId]);
  return c;
}

describe('project signing keys', () => {
  it('creates one 32-byte key per project, and concurrent first uses agree', async () => {
    assert.equal(await existingProjectSigningKey(db, projectA), null);
    const keys = await Promise.all([projectSigningKey(db, projectA), projectSigningKey(db, projectA), projectSigningKey(db, projectA)]);
    assert.equal(keys[0]!.length, 32);
    for (const k of keys) assert.deepEqual(k, keys[0]);
    const rows = await db.query('SELECT * FROM plinth.project_keys WHERE project_id = $1', [projectA]);
    assert.equal(rows.rows.length, 1);
    const b = await projectSigningKey(db, projectB);
    assert.notDeepEqual(b, keys[0]);
  });

  it('refuses unknown projects', async () => {
    await assert.rejects(projectSigningKey(db, randomUUID()));
    assert.equal(await existingProjectSigningKey(db, 'not-a-uuid'), null);
  });
});

describe('access tokens', () => {
  it('round-trips to a user actor', async () => {
    const key = await projectSigningKey(db, projectA);
    const c = await liveClaims();
    const signed = await signAccessToken(key, c);
    const actor = await new JwtTokenVerifier(db, new RevokedSessions()).verify(signed.token);
    assert.deepEqual(actor, {
      kind: 'user', label: `user:${c.subjectId}`, subjectId: c.subjectId, projectId: projectA, sessionId: c.sessionId, roles: ['authenticated'], claims: {}, strength: 'password',
    });
    const ms = Date.parse(signed.expiresAt) - Date.now();
    assert.ok(ms > (ACCESS_TOKEN_TTL_SECONDS - 5) * 1000 && ms <= ACCESS_TOKEN_TTL_SECONDS * 1000, String(ms));
  });

  it('carries subject claims into the verified actor; the largest allowed set stays under the length limit', async () => {
    const key = await projectSigningKey(db, projectA);
    const c = await liveClaims();
    const verifier = new JwtTokenVerifier(db, new RevokedSessions());
    const signed = await signAccessToken(key, { ...c, claims: { tenantId: 'acme', tier: 'gold' } });
    assert.deepEqual((await verifier.verify(signed.token))?.claims, { tenantId: 'acme', tier: 'gold' });
    // Close to the 2048 bytes of JSON parseClaims lets through, much of it three-byte characters.
    const big = parseClaims({ c0: '\u20ac'.repeat(256), c1: '\u20ac'.repeat(256), c2: 'x'.repeat(256), c3: 'y'.repeat(200) });
    assert.ok(Buffer.byteLength(JSON.stringify(big)) > 2000);
    const large = await signAccessToken(key, { ...c, claims: big });
    assert.ok(large.token.length < 4096, String(large.token.length));
    assert.deepEqual((await verifier.verify(large.token))?.claims, big);
  });

  it('carries the documented claims', async () => {
    const key = await projectSigningKey(db, projectA);
    const c = claims();
    const { token } = await signAccessToken(key, c, 1_700_000_000);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    assert.deepEqual(payload, { iss: 'plinth', aud: projectA, sub: c.subjectId, sid: c.sessionId, role: 'authenticated', iat: 1_700_000_000, exp: 1_700_000_000 + 900 });
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
    assert.equal(header.alg, 'HS256');
  });

  it('rejects tampered, expired, foreign, unsigned and garbage tokens with null', async () => {
    const verifier = new JwtTokenVerifier(db, new RevokedSessions());
    const keyA = await projectSigningKey(db, projectA);
    const keyB = await projectSigningKey(db, projectB);
    const good = (await signAccessToken(keyA, claims())).token;
    const [h, p, s] = good.split('.');

    // payload changed (another subject) with the old signature
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8'));
    payload.sub = randomUUID();
    assert.equal(await verifier.verify(`${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`), null);
    // signature flipped
    const sig = Buffer.from(s!, 'base64url');
    sig[0] = sig[0]! ^ 1;
    assert.equal(await verifier.verify(`${h}.${p}.${sig.toString('base64url')}`), null);
    // expired
    assert.equal(await verifier.verify((await signAccessToken(keyA, claims(), Math.floor(Date.now() / 1000) - ACCESS_TOKEN_TTL_SECONDS - 10)).token), null);
    // signed with project B's key but claiming project A
    assert.equal(await verifier.verify((await signAccessToken(keyB, claims(projectA))).token), null);
    // project B's own token is valid for B (the pipeline rejects it on A)
    assert.equal((await verifier.verify((await signAccessToken(keyB, await liveClaims(projectB))).token))?.projectId, projectB);
    // wrong issuer
    const c = claims();
    const wrongIss = await new SignJWT({ sid: c.sessionId, role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' })
      .setIssuer('someone-else').setAudience(projectA).setSubject(c.subjectId).setIssuedAt().setExpirationTime('5m').sign(keyA);
    assert.equal(await verifier.verify(wrongIss), null);
    // another role
    const admin = await new SignJWT({ sid: c.sessionId, role: 'service_role' }).setProtectedHeader({ alg: 'HS256' })
      .setIssuer('plinth').setAudience(projectA).setSubject(c.subjectId).setIssuedAt().setExpirationTime('5m').sign(keyA);
    assert.equal(await verifier.verify(admin), null);
    // alg none
    const none = new UnsecuredJWT({ sid: c.sessionId, role: 'authenticated' }).setIssuer('plinth').setAudience(projectA).setSubject(c.subjectId).setIssuedAt().setExpirationTime('5m').encode();
    assert.equal(await verifier.verify(none), null);
    // aud not a UUID / unknown project / garbage
    const badAud = await new SignJWT({ sid: c.sessionId, role: 'authenticated' }).setProtectedHeader({ alg: 'HS256' })
      .setIssuer('plinth').setAudience("x' OR 1=1 --").setSubject(c.subjectId).setIssuedAt().setExpirationTime('5m').sign(keyA);
    assert.equal(await verifier.verify(badAud), null);
    assert.equal(await verifier.verify((await signAccessToken(keyA, claims(randomUUID()))).token), null);
    for (const junk of ['', 'abc', 'a.b.c', '...', 'x'.repeat(10_000), `${h}.${p}`]) assert.equal(await verifier.verify(junk), null);
  });

  it('rejects tokens of sessions revoked on this node', async () => {
    const revoked = new RevokedSessions();
    const verifier = new JwtTokenVerifier(db, revoked);
    const key = await projectSigningKey(db, projectA);
    const c = await liveClaims();
    const { token } = await signAccessToken(key, c);
    assert.notEqual(await verifier.verify(token), null);
    revoked.add(c.sessionId);
    assert.equal(await verifier.verify(token), null);
  });

  it('rejects tokens whose session row is revoked, expired or missing (durable: no node memory needed)', async () => {
    const key = await projectSigningKey(db, projectA);
    const fresh = () => new JwtTokenVerifier(db, new RevokedSessions());
    const c = await liveClaims();
    const { token } = await signAccessToken(key, c);
    assert.notEqual(await fresh().verify(token), null);
    await db.query('UPDATE plinth.identity_sessions SET revoked_at = now() WHERE id = $1', [c.sessionId]);
    assert.equal(await fresh().verify(token), null);
    const d = await liveClaims();
    await db.query("UPDATE plinth.identity_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [d.sessionId]);
    assert.equal(await fresh().verify((await signAccessToken(key, d)).token), null);
    assert.equal(await fresh().verify((await signAccessToken(key, claims())).token), null);
  });
});

describe('revoked session set', () => {
  it('forgets entries after the access-token lifetime and notifies listeners', () => {
    let now = 1_000_000;
    const set = new RevokedSessions(1000, () => now);
    const heard: string[] = [];
    set.onRevoked((id) => heard.push(id));
    set.add('s1');
    set.add('s2', false);
    assert.equal(set.has('s1'), true);
    assert.deepEqual(heard, ['s1']);
    now += 1001;
    assert.equal(set.has('s1'), false);
    assert.equal(set.has('nope'), false);
  });
});

describe('refresh tokens', () => {
  it('are <sessionId>.<secret>, parse back, and carry a project tag', async () => {
    const keyA = await projectSigningKey(db, projectA);
    const keyB = await projectSigningKey(db, projectB);
    const sid = randomUUID();
    const t = newRefreshToken(keyA, sid);
    assert.ok(t.startsWith(`${sid}.`));
    const parsed = parseRefreshToken(t);
    assert.ok(parsed);
    assert.equal(parsed.sessionId, sid);
    assert.equal(refreshTokenIssuedBy(keyA, parsed), true);
    assert.equal(refreshTokenIssuedBy(keyB, parsed), false);
    // the tag binds the session id
    const other = parseRefreshToken(`${randomUUID()}.${t.split('.')[1]}`);
    assert.ok(other);
    assert.equal(refreshTokenIssuedBy(keyA, other), false);
    assert.notEqual(newRefreshToken(keyA, sid), t);
    assert.match(refreshTokenHash(t), /^[0-9a-f]{64}$/);
  });

  it('rejects malformed tokens', () => {
    const sid = randomUUID();
    for (const bad of [null, 1, '', sid, `${sid}.`, `${sid}.abc`, `nope.${'A'.repeat(64)}`, `${sid.toUpperCase()}.${'A'.repeat(64)}`, `${sid}.${'A'.repeat(63)}=`, `${sid}.${'A'.repeat(300)}`]) {
      assert.equal(parseRefreshToken(bad), null, String(bad));
    }
  });
});

describe('SqlGrantSource', () => {
  it('unions subject and role grants, caches, and reloads after invalidate', async () => {
    const subject = randomUUID();
    const grants = new SqlGrantSource(db, 60_000);
    const add = (s: string | null, role: string | null, g: string) =>
      db.query('INSERT INTO plinth.capability_grants (id, project_id, subject_id, role, grant_text) VALUES ($1, $2, $3, $4, $5)', [randomUUID(), projectA, s, role, g]);
    await add(subject, null, 'entity:Order:read');
    await add(null, 'authenticated', 'entity:Customer:*');
    await add(null, 'staff', 'entity:*:delete');
    await add(randomUUID(), null, 'entity:Secret:read');
    assert.deepEqual([...await grants.held(projectA, subject, ['authenticated'])].sort(), ['entity:Customer:*', 'entity:Order:read']);
    assert.deepEqual([...await grants.held(projectB, subject, ['authenticated'])], []);
    await add(null, 'authenticated', 'entity:Invoice:read');
    assert.equal((await grants.held(projectA, subject, ['authenticated'])).has('entity:Invoice:read'), false, 'cached');
    grants.invalidate(projectA);
    assert.equal((await grants.held(projectA, subject, ['authenticated'])).has('entity:Invoice:read'), true);
  });

  it('expires cache entries after the ttl', async () => {
    let now = 0;
    const grants = new SqlGrantSource(db, 1000, () => now);
    const subject = randomUUID();
    assert.equal((await grants.held(projectB, subject, [])).size, 0);
    await db.query('INSERT INTO plinth.capability_grants (id, project_id, subject_id, grant_text) VALUES ($1, $2, $3, $4)', [randomUUID(), projectB, subject, 'entity:Order:read']);
    assert.equal((await grants.held(projectB, subject, [])).size, 0);
    now += 1001;
    assert.equal((await grants.held(projectB, subject, [])).size, 1);
  });

  it('reads through while the cache is not trusted, and reloads what it cached before a gap (docs/adr/0009)', async () => {
    const trust = { ok: true, epoch: 0, trusted(): boolean { return this.ok; } };
    const grants = new SqlGrantSource(db, 60_000, Date.now, trust);
    const subject = randomUUID();
    const grantId = randomUUID();
    await db.query('INSERT INTO plinth.capability_grants (id, project_id, subject_id, grant_text) VALUES ($1, $2, $3, $4)', [grantId, projectB, subject, 'entity:Doc:read']);
    assert.equal((await grants.held(projectB, subject, [])).size, 1, 'cached while trusted');
    await db.query('DELETE FROM plinth.capability_grants WHERE id = $1', [grantId]);
    trust.ok = false;
    assert.equal((await grants.held(projectB, subject, [])).size, 0, 'out of contact: read through');
    trust.ok = true;
    trust.epoch++;
    assert.equal((await grants.held(projectB, subject, [])).size, 0, 'after the gap: loaded again, not the entry cached before it');
  });
});
