/**
 * Schemas of the versioning operations (CONTRACT "Control plane" → "Versioning";
 * docs/versioning-and-records.md): the platform version, a project's branch heads and
 * publications, foundations and their upgrade plans, deprecation announcements.
 * Referred to by the contracts in version.ts and version-writes.ts.
 */
import { uuidSchema } from '../../publication/openapi-components.js';
import { defineSchemas, type Json } from '../contract/index.js';
import { at, controlEnvelope, controlList, controlSingle, str, version } from './control-schemas.js';
import { optionalString, plainBody, plainString } from './plain-body.js';

export const SEMVER_PATTERN = '^[0-9]{1,6}\\.[0-9]{1,6}\\.[0-9]{1,6}$';
export const PROFILE_PATTERN = '^[a-z][a-z0-9-]{0,62}$';
const open = (description: string, properties: Json = {}): Json => ({ type: 'object', description, properties });
const SEMVER_TEXT = `A version like \`1.2.0\` (\`${SEMVER_PATTERN}\`); another string answers 422 \`Foundation.InvalidVersion\`.`;
const PROFILE_TEXT = `A profile name (\`${PROFILE_PATTERN}\`); another string answers 422 \`Foundation.InvalidProfileName\`.`;

export const VERSION_SCHEMAS = defineSchemas({
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
  ControlProjectFoundation: controlEnvelope('Foundation', 'read', {
    type: ['object', 'null'], description: 'The foundation the project adopted; null while it has adopted none.',
    properties: { projectId: uuidSchema(), profileName: str(), foundationVersion: str(), adoptedAt: at() },
  }),
  // Patterns: see plain-body.ts (checked by the handler with their own reasons).
  ControlFoundationAdoptInput: plainBody(['profileName', 'foundationVersion'], { profileName: plainString(PROFILE_TEXT), foundationVersion: plainString(SEMVER_TEXT) }),
  ControlUpgradeInput: plainBody(['targetVersion'], {
    targetVersion: plainString(SEMVER_TEXT),
    profileName: optionalString(`Needed when the project has adopted no foundation yet. ${PROFILE_TEXT}`),
  }),
  ControlUpgradePlan: controlEnvelope('UpgradePlan', ['planned', 'previewed', 'approved', 'executed', 'rolledBack'], open('An upgrade plan of the project\'s foundation, or its execution.')),
  ControlDeprecationInput: plainBody(['bindingId'], {
    bindingId: plainString('e.g. `rest:Entity.Order.List`; unknown → 404.'),
    replacement: optionalString('Required for `Deprecated` (else 422 `Deprecation.ReplacementRequired`); a URI reference or binding id, printable without spaces or angle brackets (else `Deprecation.InvalidReplacement`); sent as `Link: <replacement>; rel="successor-version"`.'),
    sunsetAt: optionalString('An ISO 8601 date-time (else 422 `Deprecation.InvalidSunset`); sent as the `Sunset` header.'),
    stability: optionalString('`Stable`, `Deprecated` (default) or `Retired` (else 422 `Deprecation.InvalidStability`); `Retired` fails dispatch closed (404 `ExposureBinding.Retired`).'),
  }),
  ControlDeprecation: {
    type: 'object', required: ['bindingId', 'stability', 'replacement', 'sunsetAt', 'announcedAt'],
    properties: { bindingId: str(), stability: str(), replacement: { type: ['string', 'null'] }, sunsetAt: { type: ['string', 'null'], format: 'date-time' }, announcedAt: at() },
  },
  ControlDeprecationSingle: controlSingle('Deprecation', 'announced', 'ControlDeprecation'),
  ControlDeprecationList: controlList('Deprecation', 'ControlDeprecation'),
});
