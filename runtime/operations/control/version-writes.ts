import { notFound, validationFailed } from '../../errors/service-error.js';
import type { ProjectCommand } from '../../versioning/commands.js';
import { findFoundation } from '../../versioning/foundations.js';
import { previewUpgrade } from '../../versioning/foundation-store.js';
import { listStability, STABILITIES, type Stability } from '../../versioning/stability-store.js';
import { control } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import { checkId } from './organizations.js';
import { checkFoundationVersion, checkProfileName, requireProjectParam, VERSION_PARAMS, versionOp } from './version.js';
import { VERSION_SCHEMAS as VS } from './version-schemas.js';

const P = 'version/projects/:projectId';
const byPath = { scope: 'none' } as const;
const scoped = { scope: 'project' } as const;
const UPGRADE_ERRORS = [400, 401, 403, 404, 409, 413, 422];
/** Shapes and types are the contract's (version-schemas.ts); patterns are checked here, with their own reasons. */
const UPGRADE = { body: VS.ControlUpgradeInput, reasons: { prefix: 'Upgrade' }, params: VERSION_PARAMS, errors: UPGRADE_ERRORS };
const PLAN_STEP = { params: VERSION_PARAMS, output: { status: 200, body: VS.ControlUpgradePlan }, errors: UPGRADE_ERRORS } as const;

const run = (ctx: OperationContext, projectId: string, cmd: ProjectCommand): Promise<unknown> => ctx.services.control.projectCommand(projectId, cmd);

/** A header value we write back verbatim (Link): printable ASCII without angle brackets, so it cannot break the header. */
const SAFE_REFERENCE = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;

/** Upgrade bodies: the target version, and the profile when the project has adopted none yet. */
function upgradeBody(body: unknown): { profileName?: string; targetVersion: string } {
  const b = body as { targetVersion: string; profileName?: string | null };
  return { targetVersion: checkFoundationVersion(b.targetVersion, 'targetVersion'), ...(b.profileName == null ? {} : { profileName: checkProfileName(b.profileName) }) };
}

export const VERSION_WRITE_SPECS = {
  adoptFoundation: versionOp('ControlPlane.Version.AdoptFoundation', byPath, {
    summary: 'Adopt a foundation profile at a version', routes: [{ method: 'POST', path: `${P}/foundation/adopt` }], params: VERSION_PARAMS,
    body: VS.ControlFoundationAdoptInput, reasons: { prefix: 'Foundation' },
    output: { status: 200, body: VS.ControlFoundation }, errors: UPGRADE_ERRORS,
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const b = ctx.inv.body as { profileName: string; foundationVersion: string };
    const profileName = checkProfileName(b.profileName);
    const foundationVersion = checkFoundationVersion(b.foundationVersion);
    if (findFoundation(profileName, foundationVersion) === undefined) throw notFound('Foundation.NotFound', `no foundation ${profileName}@${foundationVersion}`);
    return control(ctx, 'Foundation', 'adopted', await run(ctx, p.id, { kind: 'adoptFoundation', profileName, foundationVersion }));
  }),
  plan: versionOp('ControlPlane.Version.UpgradePlan', byPath, {
    summary: 'Plan an upgrade of the project\'s foundation', routes: [{ method: 'POST', path: `${P}/upgrade/plan` }], ...UPGRADE,
    output: { status: 201, body: VS.ControlUpgradePlan },
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    return control(ctx, 'UpgradePlan', 'planned', await run(ctx, p.id, { kind: 'planUpgrade', ...upgradeBody(ctx.inv.body) }), 201);
  }),
  preview: versionOp('ControlPlane.Version.UpgradePreview', byPath, {
    summary: 'What an upgrade would change (applies nothing)', routes: [{ method: 'POST', path: `${P}/upgrade/preview` }], ...UPGRADE,
    output: { status: 200, body: VS.ControlUpgradePlan },
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const b = upgradeBody(ctx.inv.body);
    return control(ctx, 'UpgradePlan', 'previewed', await previewUpgrade(ctx.services.db, p.id, b.profileName, b.targetVersion));
  }),
  approve: versionOp('ControlPlane.Version.UpgradeApprove', byPath, {
    summary: 'Approve an upgrade plan', routes: [{ method: 'POST', path: `${P}/upgrade/plans/:planId/approve` }], ...PLAN_STEP,
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const planId = checkId(ctx.inv.params.planId, 'Upgrade', 'planId');
    return control(ctx, 'UpgradePlan', 'approved', await run(ctx, p.id, { kind: 'approvePlan', planId }));
  }),
  execute: versionOp('ControlPlane.Version.UpgradeExecute', byPath, {
    summary: 'Execute an approved upgrade plan', routes: [{ method: 'POST', path: `${P}/upgrade/plans/:planId/execute` }], ...PLAN_STEP,
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const planId = checkId(ctx.inv.params.planId, 'Upgrade', 'planId');
    return control(ctx, 'UpgradePlan', 'executed', await run(ctx, p.id, { kind: 'executePlan', planId }));
  }),
  rollback: versionOp('ControlPlane.Version.UpgradeRollback', byPath, {
    summary: 'Roll an upgrade execution back', routes: [{ method: 'POST', path: `${P}/upgrade/executions/:executionId/rollback` }], ...PLAN_STEP,
  }, async (ctx) => {
    const p = await requireProjectParam(ctx);
    const executionId = checkId(ctx.inv.params.executionId, 'Upgrade', 'executionId');
    return control(ctx, 'UpgradePlan', 'rolledBack', await run(ctx, p.id, { kind: 'rollbackExecution', executionId }));
  }),
  deprecations: versionOp('ControlPlane.Version.Deprecations', scoped, {
    summary: 'Stability announcements of the scoped project\'s bindings', routes: [{ method: 'GET', path: 'version/deprecations' }],
    output: { status: 200, body: VS.ControlDeprecationList },
  }, async (ctx) =>
    control(ctx, 'Deprecation', 'listed', await listStability(ctx.services.db, ctx.scope!.project.id))),
  announce: versionOp('ControlPlane.Version.AnnounceDeprecation', scoped, {
    summary: 'Announce a binding Deprecated (Deprecation, Sunset, Link headers) or Retired', routes: [{ method: 'POST', path: 'version/deprecations/announce' }],
    body: VS.ControlDeprecationInput, reasons: { prefix: 'Deprecation' },
    output: { status: 200, body: VS.ControlDeprecationSingle },
  }, async (ctx) => {
    const b = ctx.inv.body as { bindingId: string; replacement?: string | null; sunsetAt?: string | null; stability?: string | null };
    const stability = (b.stability ?? 'Deprecated') as Stability;
    if (!STABILITIES.includes(stability)) throw validationFailed('Deprecation.InvalidStability', `stability must be one of ${STABILITIES.join(', ')}`, 'stability');
    const replacement = b.replacement ?? null;
    if (stability === 'Deprecated' && (replacement === null || replacement === '')) {
      throw validationFailed('Deprecation.ReplacementRequired', 'a Deprecated binding needs a replacement', 'replacement');
    }
    if (replacement !== null && !SAFE_REFERENCE.test(replacement)) throw validationFailed('Deprecation.InvalidReplacement', 'replacement must be a URI reference or binding id (printable, no spaces or angle brackets)', 'replacement');
    let sunsetAt: string | null = null;
    if (b.sunsetAt != null) {
      const t = Date.parse(b.sunsetAt);
      if (!/^\d{4}-\d{2}-\d{2}/.test(b.sunsetAt) || Number.isNaN(t)) throw validationFailed('Deprecation.InvalidSunset', 'sunsetAt must be an ISO 8601 date-time', 'sunsetAt');
      sunsetAt = new Date(t).toISOString();
    }
    const binding = ctx.scope!.publication.bindings.find((x) => x.bindingId === b.bindingId);
    if (binding === undefined) throw notFound('ExposureBinding.NotFound', `the project publishes no binding '${b.bindingId}'`);
    const rec = await run(ctx, ctx.scope!.project.id, { kind: 'announce', announcement: { bindingId: binding.bindingId, stability, replacement, sunsetAt } });
    return control(ctx, 'Deprecation', 'announced', rec);
  }),
};
