import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { apiKeyHash, apiKeyPrefix, newApiKeySecret, type ApiKeyGrant, UUID_RE } from '../../identity/index.js';
import { webhooksOf } from '../webhooks/outbound.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { objectBody } from './body.js';
import { GRANT_RE, pathProject, validatePolicyParts } from './grants.js';
import type { PolicyGrant } from '../../policy/grant-policy.js';
import { assertGrantWithinEnvelope } from '../../governance/within-envelope.js';

const MAX_NAME = 200;
const MAX_GRANTS = 100;
const MAX_SCOPES = 50;
/** Bound on the stored grant list (row filters included), whatever the body limit. */
const MAX_GRANTS_JSON = 64 * 1024;
const GRANT_OBJECT_KEYS = ['grant', 'rowFilter', 'check', 'fields'];

const S = PLATFORM_SCHEMA;
const COLUMNS = 'id::text AS id, project_id::text AS project_id, name, grants, scopes, created_at';

interface KeyRow { id: string; project_id: string; name: string; grants: unknown; scopes: unknown; created_at: string }

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/** The answer for a key: never the secret nor its hash; `keyPrefix` identifies it (`plk_<hex id>`). */
const record = (r: KeyRow) => ({
  id: r.id, projectId: r.project_id, name: r.name, keyPrefix: apiKeyPrefix(r.id), grants: json(r.grants), scopes: json(r.scopes), createdAt: r.created_at,
});

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One grant entry, kept as given: a grant string, or `{ grant, rowFilter?,
 * check?, fields? }`. The shape is checked here; the row-policy parts are
 * then validated against the live model (validatePolicyParts) and enforced
 * by stage 5 (runtime/policy/, docs/authorization.md).
 */
function readGrant(raw: unknown, i: number): ApiKeyGrant {
  const field = `grants[${i}]`;
  const badGrant = () => validationFailed('ApiKey.InvalidGrant', `${field} must be entity:<Entity>:<read|insert|update|delete|*>`, field);
  if (typeof raw === 'string') {
    if (!GRANT_RE.test(raw)) throw badGrant();
    return raw;
  }
  if (!isPlainObject(raw)) throw badGrant();
  for (const k of Object.keys(raw)) {
    if (!GRANT_OBJECT_KEYS.includes(k)) throw validationFailed('ApiKey.UnknownProperty', `unknown property '${k.slice(0, 64)}' in ${field}`, `${field}.${k.slice(0, 64)}`);
  }
  if (typeof raw.grant !== 'string' || !GRANT_RE.test(raw.grant)) throw validationFailed('ApiKey.InvalidGrant', `${field}.grant must be entity:<Entity>:<read|insert|update|delete|*>`, `${field}.grant`);
  for (const k of ['rowFilter', 'check'] as const) {
    if (raw[k] !== undefined && !isPlainObject(raw[k])) throw validationFailed('ApiKey.InvalidGrant', `${field}.${k} must be a filter object`, `${field}.${k}`);
  }
  if (raw.fields !== undefined && (!Array.isArray(raw.fields) || raw.fields.length > 500 || !raw.fields.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 128))) {
    throw validationFailed('ApiKey.InvalidGrant', `${field}.fields must be a list of field names`, `${field}.fields`);
  }
  return raw as ApiKeyGrant;
}

function readInput(body: unknown): { name: string; grants: ApiKeyGrant[]; scopes: string[] | null } {
  const b = objectBody(body, ['name', 'grants', 'scopes'], 'ApiKey');
  if (typeof b.name !== 'string' || b.name.trim() === '' || b.name.length > MAX_NAME) {
    throw validationFailed(b.name === undefined ? 'ApiKey.MissingProperty' : 'ApiKey.InvalidProperty', `'name' is required: a non-empty string of at most ${MAX_NAME} characters`, 'name');
  }
  if (!Array.isArray(b.grants)) throw validationFailed(b.grants === undefined ? 'ApiKey.MissingProperty' : 'ApiKey.InvalidProperty', "'grants' is required and must be an array", 'grants');
  if (b.grants.length > MAX_GRANTS) throw validationFailed('ApiKey.InvalidProperty', `'grants' holds at most ${MAX_GRANTS} entries`, 'grants');
  const grants = b.grants.map(readGrant);
  if (JSON.stringify(grants).length > MAX_GRANTS_JSON) throw validationFailed('ApiKey.InvalidProperty', `'grants' is larger than ${MAX_GRANTS_JSON} bytes`, 'grants');
  let scopes: string[] | null = null;
  if (b.scopes !== undefined && b.scopes !== null) {
    if (!Array.isArray(b.scopes) || b.scopes.length > MAX_SCOPES || !b.scopes.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 200)) {
      throw validationFailed('ApiKey.InvalidProperty', `'scopes' must be a list of at most ${MAX_SCOPES} non-empty strings`, 'scopes');
    }
    scopes = b.scopes as string[];
  }
  return { name: b.name, grants, scopes };
}

/**
 * `POST /api/projects/{projectId}/api-keys` → 201 `{ data: { id, revealTokenId, … } }`.
 * The secret is generated here, stored as sha256 only, and handed out once
 * through `CredentialReveal` (a reveal-once sealed copy the reveal deletes).
 */
export const createApiKeySpec: OperationSpec = {
  id: 'Projects.ApiKeys.Create',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const input = readInput(ctx.inv.body);
    await assertGrantWithinEnvelope(ctx, projectId, input.grants);
    await validatePolicyParts(ctx, projectId, input.grants.map((g, i) => ({ g: (typeof g === 'string' ? { grant: g } : g) as PolicyGrant, prefix: `grants[${i}].` })), 'ApiKey');
    const secrets = webhooksOf(ctx).secrets;
    const id = randomUUID();
    const secret = newApiKeySecret(id);
    const { row, revealTokenId } = await ctx.services.db.transaction(async (tx) => {
      // Reveal-once copies whose reveal expired unread serve nobody: drop them.
      await tx.query(
        `DELETE FROM ${S}.secrets s WHERE s.project_id = $1 AND s.reveal_once
           AND NOT EXISTS (SELECT 1 FROM ${S}.credential_reveals r WHERE r.secret_id = s.id AND r.expires_at > now())`,
        [projectId],
      );
      const secretId = await secrets.putRevealOnce(tx, projectId, secret);
      const row = (await tx.query<KeyRow>(
        `INSERT INTO ${S}.api_keys (id, project_id, name, secret_hash, grants, scopes, reveal_secret_id)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7) RETURNING ${COLUMNS}`,
        [id, projectId, input.name, apiKeyHash(secret), JSON.stringify(input.grants), input.scopes === null ? null : JSON.stringify(input.scopes), secretId],
      )).rows[0]!;
      return { row, revealTokenId: await secrets.revealToken(tx, secretId) };
    });
    return control(ctx, 'ApiKey', 'active', { ...record(row), revealTokenId }, 201);
  },
};

/** `GET /api/projects/{projectId}/api-keys` → 200 every key of the project, without secrets. */
export const listApiKeysSpec: OperationSpec = {
  id: 'Projects.ApiKeys.List',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const res = await ctx.services.db.query<KeyRow>(`SELECT ${COLUMNS} FROM ${S}.api_keys WHERE project_id = $1 ORDER BY created_at, id`, [projectId]);
    return control(ctx, 'ApiKey', 'listed', res.rows.map(record));
  },
};

/**
 * `DELETE /api/projects/{projectId}/api-keys/{id}` → 204. The key is refused
 * from the next request on, on every node: this node's verifier tombstones
 * it and announces the id on the cluster bus.
 */
export const deleteApiKeySpec: OperationSpec = {
  id: 'Projects.ApiKeys.Delete',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const keyId = (ctx.inv.params.id ?? '').toLowerCase();
    const missing = () => notFound('ApiKey.NotFound', 'API key not found');
    if (!UUID_RE.test(keyId)) throw missing();
    const deleted = await ctx.services.db.transaction(async (tx) => {
      const row = (await tx.query<{ reveal_secret_id: string | null }>(
        `DELETE FROM ${S}.api_keys WHERE id = $1 AND project_id = $2 RETURNING reveal_secret_id::text AS reveal_secret_id`, [keyId, projectId],
      )).rows[0];
      // An unread reveal of a deleted key must not hand its secret out any more.
      if (row?.reveal_secret_id != null) await tx.query(`DELETE FROM ${S}.secrets WHERE id = $1 AND reveal_once`, [row.reveal_secret_id]);
      return row !== undefined;
    });
    if (!deleted) throw missing();
    await ctx.services.apiKeys?.revoke(keyId);
    return noContent;
  },
};
