/**
 * The Explainability routes (runtime/operations/explainability,
 * docs/explainability.md). Registered by openapi-static.ts.
 * `POST /Explainability/access` is documented with row policy.
 */
import { dateTimeSchema, schemaRef, singleEnvelope, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export const EXPLAINABILITY_SCHEMA_NAMES = [
  'ExplainDecisionRecord', 'ExplainReadPlanInput', 'ExplainReadPlan', 'ExplainApiSurface', 'ExplainPublication',
  'ExplainProjectRuntime', 'ExplainSurfaces', 'ExplainAuthoredPublication',
] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });
const strings = (description?: string): Json => ({ type: 'array', items: { type: 'string' }, ...(description === undefined ? {} : { description }) });
const obj = (required: string[], properties: Json, description: string): Json => ({ type: 'object', required, properties, description });
const int64: Json = { type: 'integer', format: 'int64' };
const csvOrList = (description: string): Json => ({ description, oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] });

const STAGES = ['Adapter', 'Authenticate', 'ResolveScope', 'Governance', 'Grants', 'RowPolicy', 'Quota', 'Executed'];

export function explainabilitySchemas(): Json {
  return {
    ExplainDecisionRecord: singleEnvelope(obj(['correlationId', 'decision', 'reasonCode', 'stage', 'fieldMasks', 'evaluatedFilter', 'operationId', 'status'], {
      correlationId: str(), at: dateTimeSchema(), actor: str('`platform-admin`, `user:<id>`, `apikey:<id>` or `anonymous`.'),
      tenantId: { type: ['string', 'null'] }, projectId: { type: ['string', 'null'] },
      operationId: str(), status: { type: 'integer', description: 'HTTP status of the answer.' },
      decision: { type: 'string', enum: ['Allow', 'Deny', 'Mask', 'Challenge', 'Error'] },
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
    }, 'The recorded decision of one request.'), 'A request\'s decision record.'),
    ExplainReadPlanInput: {
      type: 'object', required: ['entity'], description: 'The list route\'s query, as a body.',
      properties: {
        entity: str('Entity name or collection.'),
        filter: { description: 'The list filter, as an object or its JSON text.', oneOf: [schemaRef('Filter'), { type: 'string' }] },
        sort: csvOrList('Sort keys (`-total,createdAt`), as csv or a list.'),
        include: csvOrList('Relations to include, as csv or a list.'),
      },
    },
    ExplainReadPlan: singleEnvelope(obj(['plan', 'usesIndex', 'steps', 'cacheDecision'], {
      entity: str(), plan: str('The plan in words, innermost step first. Never SQL text.'),
      usesIndex: { type: 'boolean', description: 'An index narrows the rows (an index condition), not only orders them.' },
      steps: { type: 'array', items: { type: 'object', properties: { step: str(), entity: { type: ['string', 'null'] }, index: { type: ['string', 'null'] }, indexUse: { type: ['string', 'null'], enum: ['condition', 'order', null] }, filtered: { type: 'boolean' }, estimatedRows: { type: 'number' }, depth: { type: 'integer' } } } },
      indexes: strings(), estimatedRows: { type: 'number' }, estimatedCost: { type: 'number' }, pageSize: { type: 'integer' }, sort: strings(),
      includes: { type: 'array', items: { type: 'object', properties: { relation: str(), entity: str(), lookup: str() } } },
      cacheDecision: obj(['cached', 'reason'], { cached: { type: 'boolean' }, reason: str() }, 'Whether a cache would answer.'),
      provider: { type: 'string', enum: ['postgres', 'pglite'] }, publicationVersion: int64,
    }, 'How the list route would read.')),
    ExplainApiSurface: singleEnvelope(obj(['route', 'method', 'operationId', 'bindingId', 'requiredGrants'], {
      route: str(), method: str(), operationId: str(), bindingId: str('`rest:<operationId>`.'), kind: { type: 'string', enum: ['entity', 'platform'] },
      entity: { type: ['string', 'null'] }, routeTemplate: str(), params: { type: 'object', additionalProperties: { type: 'string' } },
      authn: { type: 'string', enum: ['public', 'user', 'admin'] }, requiredGrants: strings(), grantsDependOnRequest: { type: 'boolean' },
      publicationVersion: int64, binding: { type: ['object', 'null'], description: 'The exposure binding descriptor (entity routes).' }, reason: str(),
    }, 'Why a route resolves to an operation.')),
    ExplainPublication: singleEnvelope(obj(['publicationVersion', 'head', 'entities', 'operations'], {
      publicationVersion: int64, tenantId: str(), projectId: str(), branch: str(), descriptorHash: { type: ['string', 'null'] },
      createdAt: { type: ['string', 'null'] }, correlationId: { type: ['string', 'null'] }, head: { type: 'boolean' }, headVersion: int64,
      entities: strings(), operations: strings(), bindingIds: strings(),
    }, 'A publication of the branch.')),
    ExplainProjectRuntime: singleEnvelope(obj(['publicationVersion', 'headVersion', 'branch', 'reason'], {
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
    ExplainSurfaces: singleEnvelope(obj(['publicationVersion', 'surfaces'], {
      publicationVersion: int64,
      surfaces: { type: 'array', items: { type: 'object', required: ['surfaceKind', 'ordinal', 'surfaceName', 'enabled'], properties: { surfaceKind: str(), ordinal: { type: 'integer' }, surfaceName: str(), enabled: { type: 'boolean' } } } },
    }, 'The capability surfaces the project is exposed through.')),
    ExplainAuthoredPublication: singleEnvelope(obj(['publicationVersion', 'artifacts'], {
      publicationVersion: int64, artifacts: { type: 'array', items: { type: 'object' } }, reason: str(),
    }, 'Authored artifacts bound to the publication.')),
  };
}

export function explainabilityParameters(): Json {
  return {
    ExplainCorrelationId: { name: 'correlationId', in: 'query', required: true, description: 'The request\'s correlation id (its `X-Service-Correlation-Id`).', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
    ExplainRoute: { name: 'route', in: 'query', required: true, description: 'A request path (`/api/orders`).', schema: { type: 'string' } },
    ExplainMethod: { name: 'method', in: 'query', required: false, description: 'HTTP method (default GET).', schema: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] } },
    PublicationVersion: { name: 'publicationVersion', in: 'path', required: true, description: 'Publication version.', schema: int64 },
  };
}

const T = 'Explainability';
export const EXPLAINABILITY_OPS: StaticOp[] = [
  {
    method: 'get', path: '/Explainability/access', operationId: 'Explainability.Access.Read', tag: T, unscoped: true,
    summary: 'The decision recorded for a request (every error\'s `explainUrl`)',
    description: 'The same actor or the platform admin; another actor\'s record answers 404. Readable within 10 s of the response.',
    params: ['ExplainCorrelationId'], status: 200, response: 'ExplainDecisionRecord', errors: [401, 404, 422],
  },
  { method: 'post', path: '/Explainability/readPlan', operationId: 'Explainability.ReadPlan', tag: T, summary: 'How the list route would read (the database\'s plan, in words)', body: 'ExplainReadPlanInput', status: 200, response: 'ExplainReadPlan', errors: [401, 403, 404, 422] },
  { method: 'get', path: '/Explainability/apiSurface', operationId: 'Explainability.ApiSurface.Read', tag: T, summary: 'Why a route resolves to an operation', params: ['ExplainRoute', 'ExplainMethod'], status: 200, response: 'ExplainApiSurface', errors: [401, 404, 422] },
  { method: 'get', path: '/Explainability/surface', operationId: 'Explainability.Surface', tag: T, summary: 'The capability surfaces of the project', status: 200, response: 'ExplainSurfaces', errors: [401, 404] },
  { method: 'get', path: '/Explainability/publication/latest', operationId: 'Explainability.Publication.Latest', tag: T, summary: 'The branch head publication', status: 200, response: 'ExplainPublication', errors: [401, 404] },
  { method: 'get', path: '/Explainability/publication/{publicationVersion}', operationId: 'Explainability.Publication.Read', tag: T, summary: 'One publication of the branch', params: ['PublicationVersion'], status: 200, response: 'ExplainPublication', errors: [401, 404, 422] },
  { method: 'get', path: '/Explainability/projectRuntime', operationId: 'Explainability.ProjectRuntime', tag: T, summary: 'Why a publication serves the caller\'s traffic (also `/Explainability/project-runtime`)', status: 200, response: 'ExplainProjectRuntime', errors: [401, 404] },
  { method: 'get', path: '/Explainability/authoredPublication', operationId: 'Explainability.AuthoredPublication', tag: T, summary: 'Authored artifacts bound to the publication', status: 200, response: 'ExplainAuthoredPublication', errors: [401, 404] },
];

export const EXPLAINABILITY_TAGS = [{ name: T, description: 'Why a request was decided, routed and planned as it was (docs/explainability.md).' }];
