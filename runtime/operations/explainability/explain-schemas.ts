/**
 * Schemas of the Explainability operations (docs/explainability.md), referred
 * to by their contracts in explain-contract.ts and the operation files.
 */
import { dateTimeSchema, FILTER_DESCRIPTION } from '../../publication/openapi-components.js';
import { defineSchemas, type Json } from '../contract/index.js';
import { dataSingle } from '../envelope-schemas.js';
import { controlEnvelope } from '../control/control-schemas.js';
import { HANDLER_SURFACES } from '../../authored/types.js';

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const strings = (description?: string): Json => ({ type: 'array', items: { type: 'string' }, ...(description === undefined ? {} : { description }) });
const obj = (required: string[], properties: Json, description: string): Json => ({ type: 'object', required, properties, description });
const int64: Json = { type: 'integer', format: 'int64' };
const csvOrList = (description: string): Json => ({ description, type: ['string', 'array', 'null'], items: { type: 'string' } });

const STAGES = ['Adapter', 'Authenticate', 'ResolveScope', 'Governance', 'Grants', 'RowPolicy', 'Quota', 'Executed'];
const DECISIONS = ['Allow', 'Deny', 'Mask', 'Challenge'];
export const ACCESS_OPERATIONS = ['read', 'insert', 'update', 'delete'] as const;

export const EXPLAIN_SCHEMAS = defineSchemas({
  ExplainDecisionRecord: dataSingle(obj(['correlationId', 'decision', 'reasonCode', 'stage', 'fieldMasks', 'evaluatedFilter', 'operationId', 'status'], {
    correlationId: str(), at: dateTimeSchema(), actor: str('`platform-admin`, `user:<id>`, `apikey:<id>` or `anonymous`.'),
    tenantId: { type: ['string', 'null'] }, projectId: { type: ['string', 'null'] },
    operationId: str(), status: { type: 'integer', description: 'HTTP status of the answer.' },
    decision: { type: 'string', enum: [...DECISIONS, 'Error'] },
    reasonCode: str(),
    stage: {
      type: ['string', 'null'], enum: [...STAGES, null],
      description: 'The name of the pipeline stage that decided. A refusal names the stage that refused (`Adapter`: no route, body too large or undecodable; `Quota`: a quota refused after the row policy); an Allow or a Mask names `RowPolicy`, the last access stage, which let the request through; `Executed` names an error while the operation ran. Null for records written before stages were recorded.',
    },
    stageNumber: { type: ['integer', 'null'], minimum: 0, maximum: 6, description: 'The last stage the request reached: 0 the adapter, 1–5 refused there (5 also a quota refusal), 6 executed.' },
    stageName: { type: ['string', 'null'], enum: [...STAGES, null], description: 'Same as `stage` (its name before `stage` carried the name).' },
    evaluatedFilter: { description: 'The row filter applied (request filter ANDed with the row policy); null when none.' },
    fieldMasks: strings('Fields removed by a field mask; empty when none.'),
    missingGrants: strings(), bindingId: str(), requiredStrength: str(),
    protocol: str('Present when the request did not come in over REST (`graphql`).'),
  }, 'The recorded decision of one request.'), 'A request\'s decision record.'),
  ExplainAccessInput: {
    type: 'object', required: ['entity', 'operation'], additionalProperties: false,
    description: 'What to explain: an operation on an entity, optionally with a list filter, for the caller or (platform admin only) a user of the project.',
    properties: {
      entity: { type: 'string', minLength: 1, description: 'Entity name; an unknown one answers 422 `Explainability.UnknownEntity`.' },
      operation: { type: 'string', enum: [...ACCESS_OPERATIONS] },
      filter: { description: `A list filter, as the list route takes it. ${FILTER_DESCRIPTION}` },
      // Checked by the operation, after the admin-only refusal (403 `Explainability.AsActorAdminOnly` comes first).
      asActor: { description: 'Platform admin only: `{ "subjectId": "<uuid>" }`, a registered user of the project whose access to explain.' },
    },
  },
  ExplainAccessDecision: dataSingle(obj(['decision', 'reasonCode', 'evaluatedFilter', 'fieldMasks'], {
    decision: { type: 'string', enum: DECISIONS },
    reasonCode: str('`Access.Allowed`, `Access.AllowedByRowPolicy`, `Access.FieldsMasked`, `Access.AdminBypass`, or the reason of the refusal.'),
    evaluatedFilter: { description: 'The request filter ANDed with the row policy\'s rows (with `$actor` substituted); null when none.' },
    fieldMasks: strings('Fields a read would mask.'),
    requiredStrength: str('Challenge only: the strength a step-up must reach.'),
  }, 'What stages 3 to 5 would decide for that actor, without running the operation.')),
  // Types as loose as the operation's own checks, which run first (stage 4 needs the entity); see read-plan.ts.
  ExplainReadPlanInput: {
    type: 'object', required: ['entity'], description: 'The list route\'s query, as a body.',
    properties: {
      entity: { type: 'string', minLength: 1, description: 'Entity name or collection.' },
      filter: { type: ['object', 'string', 'null'], description: `The list filter, as an object or its JSON text. ${FILTER_DESCRIPTION}` },
      sort: csvOrList('Sort keys (`-total,createdAt`), as csv or a list.'),
      include: csvOrList('Relations to include, as csv or a list.'),
    },
  },
  ExplainReadPlan: dataSingle(obj(['plan', 'usesIndex', 'steps', 'cacheDecision'], {
    entity: str(), plan: str('The plan in words, innermost step first. Never SQL text.'),
    usesIndex: { type: 'boolean', description: 'An index narrows the rows (an index condition), not only orders them.' },
    steps: { type: 'array', items: { type: 'object', properties: { step: str(), entity: { type: ['string', 'null'] }, index: { type: ['string', 'null'] }, indexUse: { type: ['string', 'null'], enum: ['condition', 'order', null] }, filtered: { type: 'boolean' }, estimatedRows: { type: 'number' }, depth: { type: 'integer' } } } },
    indexes: strings(), estimatedRows: { type: 'number' }, estimatedCost: { type: 'number' }, pageSize: { type: 'integer' }, sort: strings(),
    includes: { type: 'array', items: { type: 'object', properties: { relation: str(), entity: str(), lookup: str() } } },
    cacheDecision: obj(['cached', 'reason'], { cached: { type: 'boolean' }, reason: str() }, 'Whether a cache would answer.'),
    provider: { type: 'string', enum: ['postgres', 'pglite'] }, publicationVersion: int64,
  }, 'How the list route would read.')),
  ExplainApiSurface: dataSingle(obj(['route', 'method', 'operationId', 'bindingId', 'requiredGrants'], {
    route: str(), method: str(), operationId: str(), bindingId: str('`rest:<operationId>`.'), kind: { type: 'string', enum: ['entity', 'platform'] },
    entity: { type: ['string', 'null'] }, routeTemplate: str(), params: { type: 'object', additionalProperties: { type: 'string' } },
    authn: { type: 'string', enum: ['public', 'user', 'admin'] }, requiredGrants: strings(), grantsDependOnRequest: { type: 'boolean' },
    publicationVersion: int64, binding: { type: ['object', 'null'], description: 'The exposure binding descriptor (entity routes).' }, reason: str(),
  }, 'Why a route resolves to an operation.')),
  ExplainPublication: dataSingle(obj(['publicationVersion', 'head', 'entities', 'operations'], {
    publicationVersion: int64, tenantId: str(), projectId: str(), branch: str(), descriptorHash: { type: ['string', 'null'] },
    createdAt: { type: ['string', 'null'] }, correlationId: { type: ['string', 'null'] }, head: { type: 'boolean' }, headVersion: int64,
    entities: strings(), operations: strings(), bindingIds: strings(),
  }, 'A publication of the branch.')),
  ExplainProjectRuntime: dataSingle(obj(['publicationVersion', 'headVersion', 'branch', 'reason'], {
    tenantId: str(), projectId: str(), projectState: str(), branch: str(), branchSelectedBy: str(), publicationVersion: int64,
    descriptorHash: str(), headVersion: int64,
    pinned: { type: 'boolean', description: 'True while a deployment pins production to this publication (or ramps to it); only for requests without `X-Service-Branch`.' },
    pinnedVersion: { type: ['integer', 'null'], description: 'The publication a deployment pins production to while its pin holds; null otherwise (and with `X-Service-Branch`).' },
    servedBy: {
      type: 'object', description: 'The node that answered. Platform admin only (as on `/api/health`); absent for anyone else.',
      properties: { nodeId: str(), mode: { type: 'string', enum: ['single', 'cluster'] }, storage: str() },
    },
    reason: str(),
  }, 'Why this publication serves the caller\'s traffic.')),
  ExplainSurfaces: dataSingle(obj(['publicationVersion', 'surfaces'], {
    publicationVersion: int64,
    surfaces: { type: 'array', items: { type: 'object', required: ['surfaceKind', 'ordinal', 'surfaceName', 'enabled'], properties: { surfaceKind: str(), ordinal: { type: 'integer' }, surfaceName: str(), enabled: { type: 'boolean' } } } },
  }, 'The capability surfaces the project is exposed through.')),
  /** CONTRACT "Authored code": the control-plane envelope, like every authored-code route. */
  ExplainAuthoredPublication: controlEnvelope('Explainability', 'read', obj(['publicationVersion', 'handlers'], {
    publicationVersion: int64,
    handlers: {
      type: 'array', description: 'The handlers the publication pins, by name.',
      items: obj(['name', 'surface', 'source', 'sha256', 'bindings'], {
        name: str(), surface: { type: 'string', enum: [...HANDLER_SURFACES] }, source: str('The source-asset path it was compiled from.'),
        sha256: str('Hex digest of the source bytes the publication pinned.'), bindings: strings('Ids of the exposure bindings that reach its operation (none for a background handler).'),
      }, 'One handler of the publication.'),
    },
  }, 'Authored code bound to the publication.')),
});
