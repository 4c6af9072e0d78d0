import { randomUUID } from 'node:crypto';
import { notFound, validationFailed, ServiceError } from '../../errors/service-error.js';
import { UUID_RE } from '../../identity/index.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { identityContract } from './contract.js';
import { GRANT_SCHEMAS as S } from './grant-schemas.js';
import { assertGrantWithinEnvelope } from '../../governance/within-envelope.js';
import type { CompiledPublication } from '../../publication/compiled-publication.js';
import { hasPolicyParts, validateGrantPolicy, type PolicyGrant } from '../../policy/grant-policy.js';

import { GRANT_RE, ROLE_RE } from './grant-patterns.js';

export { GRANT_RE, ROLE_RE };

/** The `{projectId}` of the routes that take the project from the path (admin only, no scope headers). */
export const PROJECT_ID_PARAM = { projectId: { description: 'Project id.', schema: { type: 'string', format: 'uuid' } } };

const projectNotFound = (): ServiceError => notFound('Scope.ProjectNotFound', 'project not found');

/** The path's project id, after checking the project exists. */
export async function pathProject(ctx: OperationContext): Promise<string> {
  const id = ctx.inv.params.projectId ?? '';
  if (!UUID_RE.test(id)) throw projectNotFound();
  const res = await ctx.services.db.query<{ id: string }>('SELECT id::text AS id FROM plinth.projects WHERE id = $1', [id.toLowerCase()]);
  const row = res.rows[0];
  if (row === undefined) throw projectNotFound();
  return row.id;
}

interface GrantRow { id: string; project_id: string; subject_id: string | null; role: string | null; grant_text: string; row_filter: string | null; check_filter: string | null; fields: string | null; created_at: string }

const SELECT_COLUMNS = 'id::text AS id, project_id::text AS project_id, subject_id::text AS subject_id, role, grant_text, row_filter, check_filter, fields, created_at';

/** The grant record; rowFilter, check and fields only when the grant has them, exactly as given. */
const record = (r: GrantRow) => ({
  grantId: r.id, projectId: r.project_id, subjectId: r.subject_id, role: r.role, grant: r.grant_text,
  ...(r.row_filter === null ? {} : { rowFilter: JSON.parse(r.row_filter) as unknown }),
  ...(r.check_filter === null ? {} : { check: JSON.parse(r.check_filter) as unknown }),
  ...(r.fields === null ? {} : { fields: JSON.parse(r.fields) as unknown }),
  createdAt: r.created_at,
});

/** The project's main-branch live publication, the model grant policies are checked against; null before any entity exists. */
export async function mainPublication(ctx: OperationContext, projectId: string): Promise<CompiledPublication | null> {
  const t = await ctx.services.db.query<{ tenant_id: string }>('SELECT tenant_id::text AS tenant_id FROM plinth.projects WHERE id = $1', [projectId]);
  const tenantId = t.rows[0]?.tenant_id;
  if (tenantId === undefined) return null;
  try {
    return await ctx.services.publications.current(tenantId, projectId, 'main');
  } catch (err) {
    if (ServiceError.is(err) && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}

/** Checks a grant's rowFilter/check/fields against the live model (422 naming the field); no-op without them. */
export async function validatePolicyParts(ctx: OperationContext, projectId: string, grants: Array<{ g: PolicyGrant; prefix: string }>, block: string): Promise<void> {
  const withParts = grants.filter((x) => hasPolicyParts(x.g));
  if (withParts.length === 0) return;
  const pub = await mainPublication(ctx, projectId);
  for (const { g, prefix } of withParts) {
    if (pub === null) throw validationFailed(`${block}.UnknownEntity`, 'a grant with rowFilter, check or fields needs an entity of the live publication', `${prefix}grant`);
    validateGrantPolicy(pub, g, prefix, block);
  }
}

/**
 * `POST /api/projects/{projectId}/capability-grants` `{ subjectId | role, grant }` → 201.
 * Creating a grant the holder already has answers 201 with the existing
 * grant (no duplicate row), so the call is safe to repeat.
 */
export const createGrantSpec: DeclaredSpec = {
  id: 'Projects.CapabilityGrants.Create',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Grant a capability to a subject or a role of the project (repeating a grant answers the existing one)',
    description: '`grant` is `entity:<Entity|*>:<read|insert|update|delete|*>` or `branch:<name|*>:approve`, within the project\'s governance envelope; `rowFilter`, `check` and `fields` add row policy and a field mask (docs/authorization.md).',
    routes: [{ method: 'POST', path: 'projects/:projectId/capability-grants' }], params: PROJECT_ID_PARAM,
    body: S.CapabilityGrantInput,
    reasons: { prefix: 'CapabilityGrant' },
    output: { status: 201, body: S.CapabilityGrantSingle },
    errors: [400, 401, 403, 404, 413, 422],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    // CapabilityGrantInput refuses unknown properties; the holder rule comes first, so the field checks stay here (see grant-schemas.ts).
    const body = ctx.inv.body as Record<string, unknown>;
    const hasSubject = body.subjectId !== undefined && body.subjectId !== null;
    const hasRole = body.role !== undefined && body.role !== null;
    if (hasSubject === hasRole) throw validationFailed('CapabilityGrant.HolderRequired', 'give exactly one of subjectId or role');
    if (typeof body.grant !== 'string' || !GRANT_RE.test(body.grant)) {
      throw validationFailed('CapabilityGrant.InvalidGrant', 'grant must look like entity:<Entity>:<read|insert|update|delete|*>, branch:<name>:approve or operation:<name>:invoke', 'grant');
    }
    const grant = body.grant;
    await assertGrantWithinEnvelope(ctx, projectId, grant);
    const policy: PolicyGrant = { grant };
    for (const k of ['rowFilter', 'check', 'fields'] as const) if (body[k] !== undefined && body[k] !== null) (policy as unknown as Record<string, unknown>)[k] = body[k];
    await validatePolicyParts(ctx, projectId, [{ g: policy, prefix: '' }], 'CapabilityGrant');
    // Kept as the JSON text given: the record echoes it, and identical text means the identical grant.
    const text = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
    const parts = [text(policy.rowFilter), text(policy.check), text(policy.fields)];
    const db = ctx.services.db;
    let subjectId: string | null = null;
    let role: string | null = null;
    if (hasSubject) {
      if (typeof body.subjectId !== 'string' || !UUID_RE.test(body.subjectId)) throw validationFailed('CapabilityGrant.InvalidSubjectId', 'subjectId must be a UUID', 'subjectId');
      subjectId = body.subjectId.toLowerCase();
      const known = await db.query('SELECT 1 FROM plinth.identity_subjects WHERE id = $1 AND project_id = $2', [subjectId, projectId]);
      if (known.rows.length === 0) throw validationFailed('CapabilityGrant.SubjectNotFound', 'no such subject in this project', 'subjectId');
    } else {
      if (typeof body.role !== 'string' || !ROLE_RE.test(body.role)) throw validationFailed('CapabilityGrant.InvalidRole', 'role must be a role name', 'role');
      role = body.role;
    }
    const holder = subjectId !== null ? 'subject_id = $3::uuid' : 'role = $4';
    const same = 'row_filter IS NOT DISTINCT FROM $6::text AND check_filter IS NOT DISTINCT FROM $7::text AND fields IS NOT DISTINCT FROM $8::text';
    const inserted = await db.query<GrantRow>(
      `INSERT INTO plinth.capability_grants (id, project_id, subject_id, role, grant_text, row_filter, check_filter, fields)
       SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::text, $7::text, $8::text
        WHERE NOT EXISTS (SELECT 1 FROM plinth.capability_grants WHERE project_id = $2::uuid AND ${holder} AND grant_text = $5::text AND ${same})
       RETURNING ${SELECT_COLUMNS}`,
      [randomUUID(), projectId, subjectId, role, grant, ...parts],
    );
    let row = inserted.rows[0];
    if (row === undefined) {
      const existing = subjectId !== null
        ? 'project_id = $1::uuid AND subject_id = $2::uuid AND grant_text = $3'
        : 'project_id = $1::uuid AND role = $2 AND grant_text = $3';
      row = (await db.query<GrantRow>(
        `SELECT ${SELECT_COLUMNS} FROM plinth.capability_grants WHERE ${existing}
           AND row_filter IS NOT DISTINCT FROM $4::text AND check_filter IS NOT DISTINCT FROM $5::text AND fields IS NOT DISTINCT FROM $6::text
         ORDER BY created_at, id LIMIT 1`,
        [projectId, subjectId ?? role, grant, ...parts],
      )).rows[0];
      if (row === undefined) throw new Error('capability grant vanished between insert and read');
    }
    await ctx.services.grants.invalidate(projectId);
    return control(ctx, 'CapabilityGrant', 'active', record(row), 201);
  },
};

/** `GET /api/projects/{projectId}/capability-grants` → 200 every grant of the project. */
export const listGrantsSpec: DeclaredSpec = {
  id: 'Projects.CapabilityGrants.List',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'List the project\'s capability grants',
    routes: [{ method: 'GET', path: 'projects/:projectId/capability-grants' }], params: PROJECT_ID_PARAM,
    output: { status: 200, body: S.CapabilityGrantList },
    errors: [401, 403, 404],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const res = await ctx.services.db.query<GrantRow>(
      `SELECT ${SELECT_COLUMNS} FROM plinth.capability_grants WHERE project_id = $1 ORDER BY created_at, id`,
      [projectId],
    );
    return control(ctx, 'CapabilityGrant', 'listed', res.rows.map(record));
  },
};

/** `DELETE /api/projects/{projectId}/capability-grants/{grantId}` → 204. */
export const deleteGrantSpec: DeclaredSpec = {
  id: 'Projects.CapabilityGrants.Delete',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  contract: identityContract({
    summary: 'Revoke a capability grant: open realtime connections of the project are re-checked on every node',
    routes: [{ method: 'DELETE', path: 'projects/:projectId/capability-grants/:grantId' }],
    params: { ...PROJECT_ID_PARAM, grantId: { description: 'Capability grant id.', schema: { type: 'string', format: 'uuid' } } },
    output: { status: 204 },
    errors: [401, 403, 404],
  }),
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const grantId = ctx.inv.params.grantId ?? '';
    const missing = () => notFound('CapabilityGrant.NotFound', 'capability grant not found');
    if (!UUID_RE.test(grantId)) throw missing();
    const res = await ctx.services.db.query('DELETE FROM plinth.capability_grants WHERE id = $1 AND project_id = $2 RETURNING id', [grantId.toLowerCase(), projectId]);
    if (res.rows.length === 0) throw missing();
    // revoked: open realtime connections of the project end, on every node (runtime/realtime/session-connections.ts).
    await ctx.services.grants.invalidate(projectId, true);
    return noContent;
  },
};
