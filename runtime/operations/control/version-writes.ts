import { notFound, validationFailed } from '../../errors/service-error.js';
import type { ProjectCommand } from '../../versioning/commands.js';
import { findFoundation } from '../../versioning/foundations.js';
import { previewUpgrade } from '../../versioning/foundation-store.js';
import { listStability, STABILITIES, type Stability } from '../../versioning/stability-store.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';
import { readBody } from './body.js';
import { checkId } from './organizations.js';
import { checkFoundationVersion, checkProfileName, requireProjectParam } from './version.js';

const admin = (id: string, scope: 'none' | 'project', execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope, grants: noGrants, execute });

const run = (ctx: OperationContext, projectId: string, cmd: ProjectCommand): Promise<unknown> => ctx.services.control.projectCommand(projectId, cmd);

/** A header value we write back verbatim (Link): printable ASCII without angle brackets, so it cannot break the header. */
const SAFE_REFERENCE = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;

/** Upgrade bodies: the target version, and the profile when the project has adopted none yet. */
function upgradeBody(body: unknown): { profileName?: string; targetVersion: string } {
  const b = readBody<{ targetVersion: string; profileName?: string }>(body, { targetVersion: 'string', profileName: 'string?' }, 'Upgrade');
  return { targetVersion: checkFoundationVersion(b.targetVersion, 'targetVersion'), ...(b.profileName == null ? {} : { profileName: checkProfileName(b.profileName) }) };
}

export const VERSION_WRITE_SPECS = {
  adoptFoundation: admin('ControlPlane.Version.AdoptFoundation', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const b = readBody<{ profileName: string; foundationVersion: string }>(ctx.inv.body, { profileName: 'string', foundationVersion: 'string' }, 'Foundation');
    const profileName = checkProfileName(b.profileName);
    const foundationVersion = checkFoundationVersion(b.foundationVersion);
    if (findFoundation(profileName, foundationVersion) === undefined) throw notFound('Foundation.NotFound', `no foundation ${profileName}@${foundationVersion}`);
    return control(ctx, 'Foundation', 'adopted', await run(ctx, p.id, { kind: 'adoptFoundation', profileName, foundationVersion }));
  }),
  plan: admin('ControlPlane.Version.UpgradePlan', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    return control(ctx, 'UpgradePlan', 'planned', await run(ctx, p.id, { kind: 'planUpgrade', ...upgradeBody(ctx.inv.body) }), 201);
  }),
  preview: admin('ControlPlane.Version.UpgradePreview', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const b = upgradeBody(ctx.inv.body);
    return control(ctx, 'UpgradePlan', 'previewed', await previewUpgrade(ctx.services.db, p.id, b.profileName, b.targetVersion));
  }),
  approve: admin('ControlPlane.Version.UpgradeApprove', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const planId = checkId(ctx.inv.params.planId, 'Upgrade', 'planId');
    return control(ctx, 'UpgradePlan', 'approved', await run(ctx, p.id, { kind: 'approvePlan', planId }));
  }),
  execute: admin('ControlPlane.Version.UpgradeExecute', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const planId = checkId(ctx.inv.params.planId, 'Upgrade', 'planId');
    return control(ctx, 'UpgradePlan', 'executed', await run(ctx, p.id, { kind: 'executePlan', planId }));
  }),
  rollback: admin('ControlPlane.Version.UpgradeRollback', 'none', async (ctx) => {
    const p = await requireProjectParam(ctx);
    const executionId = checkId(ctx.inv.params.executionId, 'Upgrade', 'executionId');
    return control(ctx, 'UpgradePlan', 'rolledBack', await run(ctx, p.id, { kind: 'rollbackExecution', executionId }));
  }),
  deprecations: admin('ControlPlane.Version.Deprecations', 'project', async (ctx) =>
    control(ctx, 'Deprecation', 'listed', await listStability(ctx.services.db, ctx.scope!.project.id))),
  announce: admin('ControlPlane.Version.AnnounceDeprecation', 'project', async (ctx) => {
    const b = readBody<{ bindingId: string; replacement?: string; sunsetAt?: string; stability?: string }>(
      ctx.inv.body, { bindingId: 'string', replacement: 'string?', sunsetAt: 'string?', stability: 'string?' }, 'Deprecation');
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
