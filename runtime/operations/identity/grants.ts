import { randomUUID } from 'node:crypto';
import { notFound, validationFailed, type ServiceError } from '../../errors/service-error.js';
import { UUID_RE } from '../../identity/keys.js';
import { control, noContent } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { objectBody } from './body.js';
import { assertGrantWithinEnvelope } from '../../governance/within-envelope.js';

/** `entity:<Entity|*>:<verb|*>`; Entity is a PascalCase entity name. */
export const GRANT_RE = /^entity:(\*|[A-Z][A-Za-z0-9]{0,62}):(read|insert|update|delete|\*)$/;
/** Role names (`authenticated`, and whatever roles later sources assign). */
export const ROLE_RE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;

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

interface GrantRow { id: string; project_id: string; subject_id: string | null; role: string | null; grant_text: string; created_at: string }

const SELECT_COLUMNS = 'id::text AS id, project_id::text AS project_id, subject_id::text AS subject_id, role, grant_text, created_at';

const record = (r: GrantRow) => ({ grantId: r.id, projectId: r.project_id, subjectId: r.subject_id, role: r.role, grant: r.grant_text, createdAt: r.created_at });

/**
 * `POST /api/projects/{projectId}/capability-grants` `{ subjectId | role, grant }` → 201.
 * Creating a grant the holder already has answers 201 with the existing
 * grant (no duplicate row), so the call is safe to repeat.
 */
export const createGrantSpec: OperationSpec = {
  id: 'Projects.CapabilityGrants.Create',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const body = objectBody(ctx.inv.body, ['subjectId', 'role', 'grant'], 'CapabilityGrant');
    const hasSubject = body.subjectId !== undefined && body.subjectId !== null;
    const hasRole = body.role !== undefined && body.role !== null;
    if (hasSubject === hasRole) throw validationFailed('CapabilityGrant.HolderRequired', 'give exactly one of subjectId or role');
    if (typeof body.grant !== 'string' || !GRANT_RE.test(body.grant)) {
      throw validationFailed('CapabilityGrant.InvalidGrant', 'grant must look like entity:<Entity>:<read|insert|update|delete|*>', 'grant');
    }
    const grant = body.grant;
    await assertGrantWithinEnvelope(ctx, projectId, grant);
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
    const inserted = await db.query<GrantRow>(
      `INSERT INTO plinth.capability_grants (id, project_id, subject_id, role, grant_text)
       SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, $5::text
        WHERE NOT EXISTS (SELECT 1 FROM plinth.capability_grants WHERE project_id = $2::uuid AND ${holder} AND grant_text = $5::text)
       RETURNING ${SELECT_COLUMNS}`,
      [randomUUID(), projectId, subjectId, role, grant],
    );
    let row = inserted.rows[0];
    if (row === undefined) {
      const existing = subjectId !== null
        ? 'project_id = $1::uuid AND subject_id = $2::uuid AND grant_text = $3'
        : 'project_id = $1::uuid AND role = $2 AND grant_text = $3';
      row = (await db.query<GrantRow>(
        `SELECT ${SELECT_COLUMNS} FROM plinth.capability_grants WHERE ${existing} ORDER BY created_at, id LIMIT 1`,
        [projectId, subjectId ?? role, grant],
      )).rows[0];
      if (row === undefined) throw new Error('capability grant vanished between insert and read');
    }
    ctx.services.grants.invalidate(projectId);
    return control(ctx, 'CapabilityGrant', 'active', record(row), 201);
  },
};

/** `GET /api/projects/{projectId}/capability-grants` → 200 every grant of the project. */
export const listGrantsSpec: OperationSpec = {
  id: 'Projects.CapabilityGrants.List',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
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
export const deleteGrantSpec: OperationSpec = {
  id: 'Projects.CapabilityGrants.Delete',
  authn: 'admin',
  scope: 'none',
  grants: noGrants,
  async execute(ctx) {
    const projectId = await pathProject(ctx);
    const grantId = ctx.inv.params.grantId ?? '';
    const missing = () => notFound('CapabilityGrant.NotFound', 'capability grant not found');
    if (!UUID_RE.test(grantId)) throw missing();
    const res = await ctx.services.db.query('DELETE FROM plinth.capability_grants WHERE id = $1 AND project_id = $2 RETURNING id', [grantId.toLowerCase(), projectId]);
    if (res.rows.length === 0) throw missing();
    ctx.services.grants.invalidate(projectId);
    return noContent;
  },
};
