import { PLATFORM_SCHEMA } from '../../../storage/index.js';
import { explainAuthoredPublication } from '../../authored/explain.js';
import { notFound, validationFailed } from '../../errors/service-error.js';
import { CompiledPublication } from '../../publication/compiled-publication.js';
import type { ProjectModel } from '../../publication/model.js';
import { control } from '../envelopes.js';
import { noGrants, type DeclaredSpec, type OperationContext } from '../types.js';
import { explainContract } from './explain-contract.js';
import { EXPLAIN_SCHEMAS as S } from './explain-schemas.js';

/** Another version of the branch than the serving one, compiled here only for its bindings (a pure computation over its model). */
async function storedPublication(ctx: OperationContext, text: string): Promise<CompiledPublication> {
  if (!/^\d{1,15}$/.test(text)) throw validationFailed('Explainability.InvalidPublicationVersion', 'publicationVersion must be a non-negative integer', 'publicationVersion');
  const serving = ctx.scope!.publication;
  const version = Number(text);
  if (version === serving.version) return serving;
  const s = ctx.scope!;
  const r = await ctx.services.db.query<{ model: ProjectModel; descriptor_hash: string; created_at: string }>(
    `SELECT model, descriptor_hash, created_at FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version = $3`,
    [s.project.id, s.branch, version],
  );
  const row = r.rows[0];
  if (row === undefined) throw notFound('Explainability.PublicationNotFound', `branch ${s.branch} has no publication ${text}`);
  return new CompiledPublication({ ...serving.record, version, model: row.model, descriptorHash: row.descriptor_hash, createdAt: new Date(row.created_at).toISOString() });
}

/**
 * `GET /api/Explainability/authoredPublication[?publicationVersion=]`: the handlers a publication
 * pins (the serving one by default) and the exposure bindings of each. An authored-code route
 * (CONTRACT "Authored code"): platform admin, control-plane envelope.
 */
export const EXPLAIN_AUTHORED_PUBLICATION_SPEC: DeclaredSpec = {
  id: 'Explainability.AuthoredPublication', authn: 'admin', scope: 'project', grants: noGrants,
  contract: explainContract({
    summary: 'The handlers a publication pins, with their source bytes and exposure bindings',
    routes: [{ method: 'GET', path: 'Explainability/authoredPublication' }],
    query: { publicationVersion: { description: 'A publication of the branch (default: the one serving the request); unknown → 404.', schema: { type: 'string', pattern: '^[0-9]{1,15}$' } } },
    output: { status: 200, body: S.ExplainAuthoredPublication }, errors: [401, 403, 404, 422],
  }),
  execute: async (ctx) => {
    const asked = ctx.inv.query.get('publicationVersion');
    const pub = asked === undefined || asked === null ? ctx.scope!.publication : await storedPublication(ctx, asked);
    return control(ctx, 'Explainability', 'read', explainAuthoredPublication(pub.version, pub.record.model, pub.bindings));
  },
};
