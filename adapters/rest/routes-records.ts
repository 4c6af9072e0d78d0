import { ORGANIZATION_SPECS as O } from '../../runtime/operations/control/organizations.js';
import { ADOPT_TEMPLATE_SPEC, ROOT_PROJECT_SPEC } from '../../runtime/operations/control/records.js';
import type { OperationSpec } from '../../runtime/operations/types.js';
import { CONTRACT_PROJECTION_SPECS as CP } from '../../runtime/operations/control/contract-projection.js';
import { INTROSPECTION_SPECS as IN } from '../../runtime/operations/control/introspection.js';
import { SURFACE_SPECS as SF } from '../../runtime/operations/control/surfaces.js';
import { VERSION_SPECS as V } from '../../runtime/operations/control/version.js';
import { VERSION_WRITE_SPECS as VW } from '../../runtime/operations/control/version-writes.js';

type Route = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; spec: OperationSpec };

/** Records, versioning and discovery routes (docs/versioning-and-records.md), kept apart so routes.ts stays a list. */
export const RECORD_ROUTES: Route[] = [
  { method: 'GET', path: 'OrganizationRecord', spec: O.list },
  { method: 'POST', path: 'OrganizationRecord', spec: O.create },
  { method: 'GET', path: 'OrganizationRecord/:id', spec: O.read },
  { method: 'PUT', path: 'OrganizationRecord/:id', spec: O.update },
  { method: 'DELETE', path: 'OrganizationRecord/:id', spec: O.delete },
  { method: 'GET', path: 'ProjectRecord/ByOrganization/:organizationId', spec: O.projects },
  { method: 'POST', path: 'ProjectRecord/:id/adopt-template', spec: ADOPT_TEMPLATE_SPEC },
  { method: 'GET', path: 'root-project/current', spec: ROOT_PROJECT_SPEC },

  { method: 'GET', path: 'version', spec: V.platform },
  { method: 'GET', path: 'version/platform-baseline', spec: V.baseline },
  { method: 'GET', path: 'version/foundations/:profileName/:foundationVersion', spec: V.foundation },
  { method: 'GET', path: 'version/deprecations', spec: VW.deprecations },
  { method: 'POST', path: 'version/deprecations/announce', spec: VW.announce },
  { method: 'GET', path: 'version/projects/:projectId', spec: V.project },
  { method: 'GET', path: 'version/projects/:projectId/publication/:publicationVersion', spec: V.publication },
  { method: 'GET', path: 'version/projects/:projectId/foundation', spec: V.projectFoundation },
  { method: 'POST', path: 'version/projects/:projectId/foundation/adopt', spec: VW.adoptFoundation },
  { method: 'POST', path: 'version/projects/:projectId/upgrade/plan', spec: VW.plan },
  { method: 'POST', path: 'version/projects/:projectId/upgrade/preview', spec: VW.preview },
  { method: 'POST', path: 'version/projects/:projectId/upgrade/plans/:planId/approve', spec: VW.approve },
  { method: 'POST', path: 'version/projects/:projectId/upgrade/plans/:planId/execute', spec: VW.execute },
  { method: 'POST', path: 'version/projects/:projectId/upgrade/executions/:executionId/rollback', spec: VW.rollback },

  { method: 'GET', path: 'ContractProjection/descriptor', spec: CP.descriptor },
  { method: 'GET', path: 'ContractProjection/cli', spec: CP.cli },
  { method: 'GET', path: 'Introspection/surface', spec: IN.surface },
  { method: 'GET', path: 'Platform/admin-surface', spec: IN.adminSurface },
  { method: 'GET', path: 'DevBootstrapDescriptor/descriptor', spec: IN.devBootstrap },
  { method: 'GET', path: 'ExecutionCapabilityMatrix/matrix', spec: IN.capabilityMatrix },

  { method: 'GET', path: 'Surface', spec: SF.list },
  { method: 'POST', path: 'Surface', spec: SF.create },
  { method: 'GET', path: 'Surface/:id', spec: SF.read },
  { method: 'GET', path: 'Surface/:id/is-installed', spec: SF.isInstalled },
  { method: 'POST', path: 'Surface/:id/install', spec: SF.install },
  { method: 'DELETE', path: 'Surface/:id/uninstall', spec: SF.uninstall },
  { method: 'POST', path: 'Surface/:id/upgrade', spec: SF.upgrade },
  { method: 'POST', path: 'Surface/:id/suspend', spec: SF.suspend },
  { method: 'POST', path: 'Surface/:id/resume', spec: SF.resume },
];
