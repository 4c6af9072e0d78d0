import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { readHead } from '../../control/schema-change.js';
import { PRODUCTION, pinInEffect, type EnvironmentRow } from '../../deployments/serving.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import type { ProjectModel } from '../../publication/model.js';
import { entityOperations } from '../../publication/operations.js';
import { single } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import { surfacesOf } from './surfaces.js';
import { explainOp } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';

const READ_ERRORS = [401, 404];
const RUNTIME = 'Why a publication serves the caller\'s traffic (also `/Explainability/project-runtime`)';

interface Published {
  version: number;
  model: ProjectModel;
  descriptorHash: string | null;
  createdAt: string | null;
  correlationId: string | null;
}

/** A publication as Explainability shows it: what it contains and whether it is the one serving traffic. */
function describe(ctx: OperationContext, p: Published, headVersion: number) {
  const scope = ctx.scope!;
  const ops = entityOperations(p.model);
  return {
    publicationVersion: p.version,
    tenantId: scope.tenant.id,
    projectId: scope.project.id,
    branch: scope.branch,
    descriptorHash: p.descriptorHash,
    createdAt: p.createdAt,
    correlationId: p.correlationId,
    head: p.version === headVersion,
    headVersion,
    entities: p.model.entities.map((e) => e.entityName),
    operations: ops.map((o) => o.operationId),
    bindingIds: ops.map((o) => `rest:${o.operationId}`),
  };
}

/** The branch head, read from storage: the node's compiled copy may trail it by its cache interval (runtime/publication/registry.ts). */
async function head(ctx: OperationContext): Promise<Published> {
  const s = ctx.scope!;
  const h = await readHead(ctx.services.db, s.project.id, s.branch, false);
  let correlationId: string | null = null;
  if (h.version > 0) {
    const r = await ctx.services.db.query<{ correlation_id: string }>(
      `SELECT correlation_id FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`, [s.project.id, s.branch, h.version],
    );
    correlationId = r.rows[0]?.correlation_id ?? null;
  }
  return { version: h.version, model: h.model, descriptorHash: h.hash, createdAt: h.createdAt, correlationId };
}

/** Why `serving` answers this request: a deployment's pin (or its ramp), the branch head, or a head this node has not switched to yet. */
function runtimeReason(branch: string, serving: number, headVersion: number, pin: EnvironmentRow | null): string {
  if (pin !== null) {
    const ramp = pin.ramp_version !== null && Number(pin.ramp_version) === serving
      ? `the ramp of a deployment serves publication ${serving} to ${pin.ramp_percent}% of production's requests`
      : `a deployment pins production to publication ${serving}`;
    return `${ramp}; main's head is ${headVersion} (a schema change on main deploys at once and ends the pin)`;
  }
  return serving === headVersion
    ? `publication ${serving} is the head of branch ${branch}; every request of the branch is pinned to the head when it resolves its scope`
    : `this node still serves publication ${serving} while the head is ${headVersion}; it switches within its cache interval`;
}

export const EXPLAIN_PUBLICATION_SPECS = {
  /** `GET /api/Explainability/publication/latest`: the branch head (version 0, empty, before the first schema change). */
  latest: explainOp('Explainability.Publication.Latest', {
    summary: 'The branch head publication', routes: [{ method: 'GET', path: 'Explainability/publication/latest' }],
    output: { status: 200, body: S.ExplainPublication }, errors: READ_ERRORS,
  }, async (ctx) => {
    const h = await head(ctx);
    return single(ctx, describe(ctx, h, h.version));
  }),

  /** `GET /api/Explainability/publication/{publicationVersion}`: one publication of the branch; 404 when it never existed. */
  version: explainOp('Explainability.Publication.Read', {
    summary: 'One publication of the branch', routes: [{ method: 'GET', path: 'Explainability/publication/:publicationVersion' }],
    params: { publicationVersion: { description: 'Publication version.', schema: { type: 'integer', format: 'int64' } } },
    output: { status: 200, body: S.ExplainPublication }, errors: [401, 404, 422],
  }, async (ctx) => {
    const text = ctx.inv.params.publicationVersion ?? '';
    if (!/^\d{1,15}$/.test(text)) throw validationFailed('Explainability.InvalidPublicationVersion', 'publicationVersion must be a non-negative integer', 'publicationVersion');
    const s = ctx.scope!;
    const r = await ctx.services.db.query<{ model: ProjectModel; descriptor_hash: string; created_at: string; correlation_id: string }>(
      `SELECT model, descriptor_hash, created_at, correlation_id FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`,
      [s.project.id, s.branch, Number(text)],
    );
    const row = r.rows[0];
    if (row === undefined) throw notFound('Explainability.PublicationNotFound', `branch ${s.branch} has no publication ${text}`);
    const h = await readHead(ctx.services.db, s.project.id, s.branch, false);
    return single(ctx, describe(ctx, { version: Number(text), model: row.model, descriptorHash: row.descriptor_hash, createdAt: row.created_at, correlationId: row.correlation_id }, h.version));
  }),

  /** `GET /api/Explainability/projectRuntime` (also `project-runtime`): why this publication serves the caller's traffic. */
  projectRuntime: explainOp('Explainability.ProjectRuntime', {
    summary: RUNTIME,
    routes: [
      { method: 'GET', path: 'Explainability/projectRuntime' },
      { method: 'GET', path: 'Explainability/project-runtime', summary: 'Why a publication serves the caller\'s traffic (same as `/Explainability/projectRuntime`)' },
    ],
    output: { status: 200, body: S.ExplainProjectRuntime }, errors: READ_ERRORS,
  }, async (ctx) => {
    const s = ctx.scope!;
    const h = await head(ctx);
    const serving = s.publication;
    const byHeader = ctx.inv.branchHeader !== null;
    // Only production traffic (no X-Service-Branch) is served by a deployment's pin; h is then main's head.
    const pin = byHeader ? null : await pinInEffect(ctx.services.db, s.project.id, PRODUCTION, h.version);
    const pinnedVersion = pin === null ? null : Number(pin.pinned_version);
    const rampVersion = pin === null || pin.ramp_version === null ? null : Number(pin.ramp_version);
    const pinned = pin !== null && (serving.version === pinnedVersion || serving.version === rampVersion);
    return single(ctx, {
      tenantId: s.tenant.id,
      projectId: s.project.id,
      projectState: s.project.state,
      branch: s.branch,
      branchSelectedBy: byHeader ? 'X-Service-Branch header' : 'default branch (no X-Service-Branch header)',
      publicationVersion: serving.version,
      descriptorHash: serving.record.descriptorHash,
      headVersion: h.version,
      pinned,
      pinnedVersion,
      // Which node answered is operator knowledge: /api/health shows it to the admin only, so does this.
      ...(ctx.actor.kind === 'admin' ? { servedBy: { nodeId: ctx.services.nodeId, mode: ctx.services.node.mode, storage: ctx.services.db.backend } } : {}),
      reason: runtimeReason(s.branch, serving.version, h.version, pinned ? pin : null),
    });
  }),

  /** `GET /api/Explainability/surface`: the capability surfaces through which this project's publication is exposed. */
  surface: explainOp('Explainability.Surface', {
    summary: 'The capability surfaces of the project', routes: [{ method: 'GET', path: 'Explainability/surface' }],
    output: { status: 200, body: S.ExplainSurfaces }, errors: READ_ERRORS,
  }, async (ctx) => {
    const pub = ctx.scope!.publication;
    return single(ctx, { publicationVersion: pub.version, surfaces: surfacesOf(ctx) });
  }),
};
