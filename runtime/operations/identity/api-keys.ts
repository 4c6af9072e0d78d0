import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { apiKeyHash, apiKeyPrefix, newApiKeySecret, type ApiKeyGrant, UUID_RE } from '../../identity/index.js';
import { webhooksOf } from '../webhooks/outbound.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { API_KEY_SCHEMAS as K } from './api-key-schemas.js';
import { identityContract } from './contract.js';
import { pathProject, PROJECT_ID_PARAM, validatePolicyParts } from './grants.js';
import type { PolicyGrant } from '../../policy/grant-policy.js';
import { assertGrantWithinEnvelope } from '../../governance/within-envelope.js';

const MAX_NAME = 200;
const MAX_SCOPES = 50;
/** Bound on the stored grant list (row filters included), whatever the body limit. */
const MAX_GRANTS_JSON = 64 * 1024;

const S = PLATFORM_SCHEMA;
const COLUMNS = 'id::text AS id, project_id::text AS project_id, name, grants, scopes, created_at';

interface KeyRow { id: string; project_id: string; name: string; grants: unknown; scopes: unknown; created_at: string }

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

/** The answer for a key: never the secret nor its hash; `keyPrefix` identifies it (`plk_<hex id>`). */
const record = (r: KeyRow) => ({
  id: r.id, projectId: r.project_id, name: r.name, keyPrefix: apiKeyPrefix(r.id), grants: json(r.grants), scopes: json(r.scopes), createdAt: r.created_at,
});

/**
 * One grant entry, kept as given: a grant string, or `{ grant, rowFilter?,
 * check?, fields? }`, its shape checked by ApiKeyGrant (api-key-schemas.ts).
 * The field names are checked here: a bad one is reported as `grants[i].fields`.
 * The row-policy parts are then validated against the live model
 * (validatePolicyParts) and enforced by stage 5 (runtime/policy/, docs/authorization.md).
 */
function readGrant(raw: unknown, i: number): ApiKeyGrant {
  const g = raw as ApiKeyGrant;
  if (typeof g !== 'string' && Array.isArray(g.fields) && !g.fields.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 128)) {
    throw validationFailed('ApiKey.InvalidGrant', `grants[${i}].fields must be a list of field names`, `grants[${i}].fields`);
  }
  return g;
}

/**
 * The body's shape is checked by ApiKeyInput (api-key-schemas.ts); what stays here is what the
 * schema cannot say with the same 422s: field names of grants, the stored size, scope entries
 * (reported as `scopes`), and the name's length in UTF-16 units.
 */
function readInput(body: unknown): { name: string; grants: ApiKeyGrant[]; scopes: string[] | null } {
  const b = body as { name: string; grants: unknown[]; scopes?: unknown[] | null };
  if (b.name.length > MAX_NAME) throw validationFailed('ApiKey.InvalidProperty', `'name' is required: a non-empty string of at most ${MAX_NAME} characters`, 'name');
  const grants = b.grants.map(readGrant);
  if (JSON.stringify(grants).length > MAX_GRANTS_JSON) throw validationFailed('ApiKey.InvalidProperty', `'grants' is larger than ${MAX_GRANTS_JSON} bytes`, 'grants');
  let scopes: string[] | null = null;
  if (b.scopes !== undefined && b.scopes !== null) {
    if (!b.scopes.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 200)) {
      throw validationFailed('ApiKey.InvalidProperty', `'scopes' must be a list of at most ${MAX_SCOPES} non-empty strings`, 'scopes');
    }
    scopes = b.scopes as string[];
  }
  return { name: b.name, grants, scopes };
}

const KEY_ID = { id: { description: 'API key id.', schema: { type: 'string', format: 'uuid' } } };

/**
 * `POST /api/projects/{projectId}/api-keys` → 201 `{ data: { id, revealTokenId, … } }`.
 * The secret is generated here, stored as sha256 only, and handed out once
 * through `CredentialReveal` (a reveal-once sealed copy the reveal deletes).
 */
export const createApiKeySpec: DeclaredSpec = {
  id: 'Projects.ApiKeys.Create',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Create an API key (one-time reveal via `revealTokenId`)',
    description: 'The key is sent as `Authorization: Bearer plk_…` with the project\'s scope headers and acts with exactly its grants, on this project only.',
    routes: [{ method: 'POST', path: 'projects/:projectId/api-keys' }], params: PROJECT_ID_PARAM,
    body: K.ApiKeyInput, reasons: { prefix: 'ApiKey', order: 'properties', fields: { 'grants[]': 'ApiKey.InvalidGrant' } },
    output: { status: 201, body: K.ApiKeySingle },
    errors: [401, 403, 404, 413, 422],
  }),
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
export const listApiKeysSpec: DeclaredSpec = {
  id: 'Projects.ApiKeys.List',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'List the project\'s API keys (never their secrets)',
    routes: [{ method: 'GET', path: 'projects/:projectId/api-keys' }], params: PROJECT_ID_PARAM,
    output: { status: 200, body: K.ApiKeyList },
    errors: [401, 403, 404],
  }),
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
export const deleteApiKeySpec: DeclaredSpec = {
  id: 'Projects.ApiKeys.Delete',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Delete an API key: refused from its next request on, on every node',
    routes: [{ method: 'DELETE', path: 'projects/:projectId/api-keys/:id' }], params: { ...PROJECT_ID_PARAM, ...KEY_ID },
    output: { status: 204 },
    errors: [401, 403, 404],
  }),
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
