/**
 * `/version…` (CONTRACT "Control plane" → "Versioning"; docs/versioning-and-records.md): the
 * platform version (public), a project's branch heads and publications, foundations and
 * their upgrade plans (by path project id, no scope headers), and deprecation announcements
 * (scoped project). Registered by openapi-control-plane.ts.
 */
import { uuidSchema, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';
import { READ_ERRORS, WRITE_ERRORS, at, controlEnvelope, controlList, controlSingle, pathParam, str, version } from './openapi-control-common.js';

export const VERSIONING_SCHEMA_NAMES = [
  'ControlPlatformVersion', 'ControlProjectVersions', 'ControlPublication', 'ControlPlatformBaseline', 'ControlFoundation',
  'ControlFoundationAdoptInput', 'ControlUpgradeInput', 'ControlUpgradePlan', 'ControlDeprecationInput', 'ControlDeprecation',
  'ControlDeprecationSingle', 'ControlDeprecationList',
] as const;

const SEMVER = '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$';
const PROFILE = '^[a-z][a-z0-9-]{0,62}$';
const open = (description: string, properties: Json = {}): Json => ({ type: 'object', description, properties });

export function versioningSchemas(): Json {
  return {
    ControlPlatformVersion: controlEnvelope('Version', 'read', {
      type: 'object', required: ['platformVersion', 'apiVersions'], properties: { platformVersion: str(), apiVersions: { type: 'array', items: { type: 'string' }, description: '`["v1"]`.' } },
    }),
    ControlProjectVersions: controlEnvelope('Version', 'read', {
      type: 'object', required: ['projectId', 'branches', 'environments'],
      properties: {
        projectId: uuidSchema(),
        branches: { type: 'object', additionalProperties: version(), description: 'Branch name → head publicationVersion.' },
        environments: { type: 'object', required: ['production'], additionalProperties: version(), description: 'Environment → servingVersion.' },
      },
    }),
    ControlPublication: controlEnvelope('Publication', 'read', {
      type: 'object', required: ['publicationVersion', 'branch', 'entities', 'descriptorHash', 'createdAt'],
      properties: { publicationVersion: version(), branch: str(), entities: { type: 'array', items: { type: 'string' } }, descriptorHash: { type: 'string', pattern: '^sha256:[0-9a-f]+$' }, createdAt: at() },
    }),
    ControlPlatformBaseline: controlEnvelope('PlatformBaseline', 'read', open('What this platform build runs.', {
      platformVersion: str(), apiVersions: { type: 'array', items: { type: 'string' } }, platformSchemaVersion: { type: 'integer' },
      protocols: { type: 'array', items: { type: 'string' } },
      foundations: { type: 'array', items: { type: 'object', required: ['profileName', 'foundationVersion'], properties: { profileName: str(), foundationVersion: str() } } },
    })),
    ControlFoundation: controlEnvelope('Foundation', ['read', 'adopted'], open('A foundation profile at a version (capabilities, platform schema it needs), or the one a project adopted.', {
      profileName: str(), foundationVersion: str(), capabilities: { type: 'array', items: { type: 'string' } }, available: { type: 'boolean' },
    })),
    ControlFoundationAdoptInput: {
      type: 'object', required: ['profileName', 'foundationVersion'],
      properties: { profileName: { type: 'string', pattern: PROFILE }, foundationVersion: { type: 'string', pattern: SEMVER } },
    },
    ControlUpgradeInput: {
      type: 'object', required: ['targetVersion'],
      properties: { targetVersion: { type: 'string', pattern: SEMVER }, profileName: { type: 'string', pattern: PROFILE, description: 'Needed when the project has adopted no foundation yet.' } },
    },
    ControlUpgradePlan: controlEnvelope('UpgradePlan', ['planned', 'previewed', 'approved', 'executed', 'rolledBack'], open('An upgrade plan of the project\'s foundation, or its execution.')),
    ControlDeprecationInput: {
      type: 'object', required: ['bindingId'],
      properties: {
        bindingId: str('e.g. `rest:Entity.Order.List`; unknown → 404.'),
        replacement: str('Required for `Deprecated`; sent as `Link: <replacement>; rel="successor-version"`.'),
        sunsetAt: { type: 'string', format: 'date-time', description: 'Sent as the `Sunset` header.' },
        stability: { type: 'string', enum: ['Stable', 'Deprecated', 'Retired'], description: 'Default `Deprecated`; `Retired` fails dispatch closed (404 `ExposureBinding.Retired`).' },
      },
    },
    ControlDeprecation: {
      type: 'object', required: ['bindingId', 'stability', 'replacement', 'sunsetAt', 'announcedAt'],
      properties: { bindingId: str(), stability: str(), replacement: { type: ['string', 'null'] }, sunsetAt: { type: ['string', 'null'], format: 'date-time' }, announcedAt: at() },
    },
    ControlDeprecationSingle: controlSingle('Deprecation', 'announced', 'ControlDeprecation'),
    ControlDeprecationList: controlList('Deprecation', 'ControlDeprecation'),
  };
}

export function versioningParameters(): Json {
  return {
    ControlPublicationVersion: pathParam('publicationVersion', 'A publication version (positive integer).', { type: 'string', pattern: '^[1-9][0-9]{0,17}$' }),
    ControlProfileName: pathParam('profileName', 'Foundation profile.', { type: 'string', pattern: PROFILE }),
    ControlFoundationVersion: pathParam('foundationVersion', 'Foundation version (`1.2.0`).', { type: 'string', pattern: SEMVER }),
    ControlPlanId: pathParam('planId', 'Upgrade plan id.', uuidSchema()),
    ControlExecutionId: pathParam('executionId', 'Upgrade execution id.', uuidSchema()),
  };
}

const TAG = 'Versioning';
const byPath = (o: Omit<StaticOp, 'tag' | 'auth' | 'unscoped'>): StaticOp => ({ ...o, tag: TAG, auth: 'admin', unscoped: true });
const P = '/version/projects/{projectId}';
const UPGRADE_ERRORS = [400, 401, 403, 404, 409, 413, 422];

export const VERSIONING_OPS: StaticOp[] = [
  { method: 'get', path: '/version', operationId: 'ControlPlane.Version.Platform', tag: TAG, auth: 'public', unscoped: true, summary: 'Platform version and API versions (no credential)', status: 200, response: 'ControlPlatformVersion', errors: [] },
  byPath({ method: 'get', path: '/version/platform-baseline', operationId: 'ControlPlane.Version.PlatformBaseline', summary: 'Platform baseline: versions, protocols, foundations', status: 200, response: 'ControlPlatformBaseline', errors: [401, 403] }),
  byPath({ method: 'get', path: '/version/foundations/{profileName}/{foundationVersion}', operationId: 'ControlPlane.Version.Foundation', summary: 'A foundation profile at a version', params: ['ControlProfileName', 'ControlFoundationVersion'], status: 200, response: 'ControlFoundation', errors: READ_ERRORS }),
  { method: 'get', path: '/version/deprecations', operationId: 'ControlPlane.Version.Deprecations', tag: TAG, auth: 'admin', summary: 'Stability announcements of the scoped project\'s bindings', status: 200, response: 'ControlDeprecationList', errors: READ_ERRORS },
  { method: 'post', path: '/version/deprecations/announce', operationId: 'ControlPlane.Version.AnnounceDeprecation', tag: TAG, auth: 'admin', summary: 'Announce a binding Deprecated (Deprecation, Sunset, Link headers) or Retired', body: 'ControlDeprecationInput', status: 200, response: 'ControlDeprecationSingle', errors: WRITE_ERRORS },
  byPath({ method: 'get', path: P, operationId: 'ControlPlane.Version.Project', summary: 'Head publicationVersion of every branch and the version production serves', params: ['PathProjectId'], status: 200, response: 'ControlProjectVersions', errors: READ_ERRORS }),
  byPath({ method: 'get', path: `${P}/publication/{publicationVersion}`, operationId: 'ControlPlane.Version.Publication', summary: 'One publication: branch, entities, descriptor hash', params: ['PathProjectId', 'ControlPublicationVersion'], status: 200, response: 'ControlPublication', errors: READ_ERRORS }),
  byPath({ method: 'get', path: `${P}/foundation`, operationId: 'ControlPlane.Version.ProjectFoundation', summary: 'The foundation the project adopted', params: ['PathProjectId'], status: 200, response: 'ControlFoundation', errors: READ_ERRORS }),
  byPath({ method: 'post', path: `${P}/foundation/adopt`, operationId: 'ControlPlane.Version.AdoptFoundation', summary: 'Adopt a foundation profile at a version', params: ['PathProjectId'], body: 'ControlFoundationAdoptInput', status: 200, response: 'ControlFoundation', errors: UPGRADE_ERRORS }),
  byPath({ method: 'post', path: `${P}/upgrade/plan`, operationId: 'ControlPlane.Version.UpgradePlan', summary: 'Plan an upgrade of the project\'s foundation', params: ['PathProjectId'], body: 'ControlUpgradeInput', status: 201, response: 'ControlUpgradePlan', errors: UPGRADE_ERRORS }),
  byPath({ method: 'post', path: `${P}/upgrade/preview`, operationId: 'ControlPlane.Version.UpgradePreview', summary: 'What an upgrade would change (applies nothing)', params: ['PathProjectId'], body: 'ControlUpgradeInput', status: 200, response: 'ControlUpgradePlan', errors: UPGRADE_ERRORS }),
  byPath({ method: 'post', path: `${P}/upgrade/plans/{planId}/approve`, operationId: 'ControlPlane.Version.UpgradeApprove', summary: 'Approve an upgrade plan', params: ['PathProjectId', 'ControlPlanId'], status: 200, response: 'ControlUpgradePlan', errors: UPGRADE_ERRORS }),
  byPath({ method: 'post', path: `${P}/upgrade/plans/{planId}/execute`, operationId: 'ControlPlane.Version.UpgradeExecute', summary: 'Execute an approved upgrade plan', params: ['PathProjectId', 'ControlPlanId'], status: 200, response: 'ControlUpgradePlan', errors: UPGRADE_ERRORS }),
  byPath({ method: 'post', path: `${P}/upgrade/executions/{executionId}/rollback`, operationId: 'ControlPlane.Version.UpgradeRollback', summary: 'Roll an upgrade execution back', params: ['PathProjectId', 'ControlExecutionId'], status: 200, response: 'ControlUpgradePlan', errors: UPGRADE_ERRORS }),
];

export const VERSIONING_TAG = { name: TAG, description: 'Platform and project versions, publications, foundations, binding stability.' };
