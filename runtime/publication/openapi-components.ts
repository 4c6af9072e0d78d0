/**
 * Shared pieces of the OpenAPI document: `$ref` helpers and the components
 * every publication has (error envelope, page, meta, filter, parameters,
 * responses, headers, security schemes). Each function returns fresh objects
 * so the document never shares instances (YAML would alias them).
 */
import { ERROR_CODES } from '../errors/codes.js';

export type Json = Record<string, unknown>;

export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const paramRef = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });
export const responseRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });
export const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });
export const jsonContent = (schema: Json): Json => ({ 'application/json': { schema } });

/** Schema names the shared components own; entity-derived names never take them. */
export const SHARED_SCHEMA_NAMES = [
  'ErrorEnvelope', 'Meta', 'Page', 'Filter', 'FieldCondition', 'CountResult', 'BatchDeleteResult', 'RelationAttachInput',
] as const;

export const DECIMAL_PATTERN = '^[+-]?[0-9]+(\\.[0-9]+)?$';
export const uuidSchema = (): Json => ({ type: 'string', format: 'uuid' });
export const dateTimeSchema = (): Json => ({ type: 'string', format: 'date-time' });

/** `{ data: <data>, meta: Meta }`. */
export const singleEnvelope = (data: Json, description?: string): Json => ({
  type: 'object',
  ...(description === undefined ? {} : { description }),
  required: ['data', 'meta'],
  properties: { data, meta: schemaRef('Meta') },
});

/** `{ data: <item>[], page: Page, meta: Meta }`. */
export const listEnvelope = (item: Json, description?: string): Json => ({
  type: 'object',
  ...(description === undefined ? {} : { description }),
  required: ['data', 'page', 'meta'],
  properties: { data: { type: 'array', items: item }, page: schemaRef('Page'), meta: schemaRef('Meta') },
});

export const FILTER_DESCRIPTION =
  'Typed filter expression, sent as JSON: `{ "<field>": { "<op>": value }, "and": [ … ], "or": [ … ], "not": { … } }`. ' +
  'Operators: `eq`, `ne`, `gt`, `lt`, `in` (array), `between` (`[lo, hi]`), `like` (string, `%` wildcard), `isNull` (`true`|`false`). ' +
  'A reference field nests a filter on the related entity (`{ "customer": { "id": { "eq": "<uuid>" } } }`). ' +
  'Decimal values are strings. An invalid filter or an unknown field answers 422 VALIDATION_FAILED.';

export function sharedSchemas(): Json {
  return {
    ErrorEnvelope: {
      type: 'object',
      description: 'The canonical error envelope of every non-2xx answer.',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'reasonCode', 'correlationId'],
          properties: {
            code: { type: 'string', enum: [...ERROR_CODES] },
            message: { type: 'string' },
            reasonCode: { type: 'string', description: 'Stable `<Block>.<Reason>` code, e.g. `Access.DeniedByPolicy`.' },
            correlationId: { type: 'string' },
            field: { type: 'string' },
            retryable: { type: 'boolean' },
            explainUrl: { type: 'string', description: 'Explainability record of the decision (`/api/Explainability/access?correlationId=…`).' },
            bindingId: { type: 'string' },
            missingGrants: { type: 'array', items: { type: 'string' } },
            details: { type: 'object', description: 'Structured facts about the error, e.g. a handler\'s compile problem `{ path, line, column, message }`.' },
            errors: {
              type: 'array',
              description: 'One entry per invalid field when several are wrong; at most 100.',
              items: {
                type: 'object',
                required: ['field', 'reasonCode', 'message'],
                properties: { field: { type: 'string' }, reasonCode: { type: 'string' }, message: { type: 'string' } },
              },
            },
            errorCount: { type: 'integer', description: 'How many problems were found (present with `errors`).' },
            truncated: { type: 'boolean', description: 'True when `errors` lists fewer than `errorCount`.' },
          },
        },
      },
    },
    Meta: {
      type: 'object',
      required: ['correlationId'],
      properties: { correlationId: { type: 'string', description: 'Same value as the `X-Service-Correlation-Id` header.' } },
    },
    Page: {
      type: 'object',
      required: ['number', 'size'],
      properties: {
        number: { type: 'integer', minimum: 1, description: 'Page number, 1-indexed.' },
        size: { type: 'integer', minimum: 0 },
        totalCount: { type: 'integer', minimum: 0, description: 'Present when `includeTotal=true`.' },
        next: { type: ['string', 'null'], description: 'Opaque cursor of the next page (pass as `cursor`).' },
        prev: { type: ['string', 'null'], description: 'Opaque cursor of the previous page.' },
      },
    },
    Filter: {
      type: 'object',
      description: FILTER_DESCRIPTION,
      properties: {
        and: { type: 'array', items: schemaRef('Filter') },
        or: { type: 'array', items: schemaRef('Filter') },
        not: schemaRef('Filter'),
      },
      additionalProperties: schemaRef('FieldCondition'),
      examples: [{ status: { in: ['paid', 'shipped'] }, or: [{ total: { gt: '100.00' } }, { customer: { id: { eq: '00000000-0000-4000-8000-000000000000' } } }] }],
    },
    FieldCondition: {
      type: 'object',
      description: 'Operators on one field. On a reference field the keys are instead the related entity\'s fields (a nested filter).',
      properties: {
        eq: {}, ne: {}, gt: {}, lt: {},
        in: { type: 'array' },
        between: { type: 'array', minItems: 2, maxItems: 2 },
        like: { type: 'string' },
        isNull: { type: 'boolean' },
      },
      additionalProperties: schemaRef('FieldCondition'),
    },
    CountResult: singleEnvelope({ type: 'object', required: ['count'], properties: { count: { type: 'integer', minimum: 0 } } }),
    BatchDeleteResult: singleEnvelope({ type: 'object', required: ['deleted'], properties: { deleted: { type: 'integer', minimum: 0 } } }),
    RelationAttachInput: {
      type: 'object',
      required: ['relatedId'],
      additionalProperties: false,
      properties: { relatedId: uuidSchema() },
    },
  };
}

const header = (name: string, description: string, required: boolean, schema: Json): Json => ({ name, in: 'header', description, required, schema });
const query = (name: string, description: string, schema: Json): Json => ({ name, in: 'query', description, required: false, schema });

export function sharedParameters(): Json {
  return {
    TenantHeader: header('X-Service-Tenant', 'Tenant slug or canonical tenant id.', true, { type: 'string', minLength: 1 }),
    ProjectHeader: header('X-Service-Project', 'Project slug or canonical project id.', true, { type: 'string', minLength: 1 }),
    BranchHeader: header('X-Service-Branch', 'Optional branch override for preview/sandbox reads and writes (default `main`).', false, { type: 'string', minLength: 1 }),
    IdempotencyKey: header('Idempotency-Key', 'Safe-retry key: a repeated key within 24 hours returns the prior result.', false, { type: 'string', minLength: 1, maxLength: 255 }),
    IfMatch: header('If-Match', 'Expected `concurrencyToken` (the `ETag` of a read); a mismatch answers 409 CONFLICT.', false, { type: 'string' }),
    EntityId: { name: 'id', in: 'path', required: true, description: 'Row id.', schema: uuidSchema() },
    RelatedId: { name: 'relatedId', in: 'path', required: true, description: 'Id of the related row to detach.', schema: uuidSchema() },
    Filter: query('filter', FILTER_DESCRIPTION, { type: 'string', contentMediaType: 'application/json', contentSchema: schemaRef('Filter') }),
    Sort: query('sort', 'Comma-separated field names; prefix `-` for descending (e.g. `-createdAt,id`).', { type: 'string' }),
    Fields: query('fields', 'Sparse projection: comma-separated field names.', { type: 'string' }),
    Include: query('include', 'Comma-separated relations to expand; a reference field is replaced in place by the related row.', { type: 'string' }),
    Page: query('page', 'Page number, 1-indexed.', { type: 'integer', minimum: 1 }),
    PageSize: query('pageSize', 'Items per page (maximum 200; more answers 422).', { type: 'integer', minimum: 1, maximum: 200 }),
    Cursor: query('cursor', 'Opaque cursor from `page.next`/`page.prev` (preferred; stable across concurrent writes). A cursor from another filter/sort answers 422.', { type: 'string' }),
    IncludeTotal: query('includeTotal', 'Adds `totalCount` to `page`.', { type: 'boolean' }),
    Force: query('force', 'Hard-delete rows of a soft-delete entity (admin only).', { type: 'boolean' }),
  };
}

export function sharedHeaders(): Json {
  const str = (description: string): Json => ({ description, schema: { type: 'string' } });
  return {
    CorrelationId: str('Correlation id of the request; also in `meta.correlationId` or `error.correlationId`.'),
    ETag: str('The row\'s `concurrencyToken`; send it back as `If-Match`.'),
    QuotaKind: str('Quota kind, e.g. `read.monthly`.'),
    QuotaLimit: { description: 'Quota limit.', schema: { type: 'number' } },
    QuotaUsed: { description: 'Quota used in the window.', schema: { type: 'number' } },
    QuotaReset: { description: 'End of the quota window (ISO 8601 UTC).', schema: dateTimeSchema() },
  };
}

export const correlationHeaders = (): Json => ({ 'X-Service-Correlation-Id': headerRef('CorrelationId') });

/** Error responses by status, plus `default`. */
export const ERROR_RESPONSE_NAMES: Record<string, string> = {
  '400': 'BadRequest', '401': 'Unauthorized', '403': 'Forbidden', '404': 'NotFound', '409': 'Conflict',
  '413': 'PayloadTooLarge', '422': 'ValidationFailed', '429': 'QuotaExceeded', '502': 'BadGateway', '503': 'Unavailable', '504': 'GatewayTimeout', default: 'Error',
};

export function sharedResponses(): Json {
  const error = (description: string, extraHeaders: Json = {}): Json => ({
    description,
    headers: { ...correlationHeaders(), ...extraHeaders },
    content: jsonContent(schemaRef('ErrorEnvelope')),
  });
  return {
    BadRequest: error('Malformed request (e.g. missing scope headers).'),
    Unauthorized: error('UNAUTHORIZED: missing or invalid bearer token.'),
    Forbidden: error('ACCESS_DENIED: the actor lacks a grant, a claim, or row access; see `missingGrants` and `explainUrl`.'),
    NotFound: error('NOT_FOUND: the row (or route) does not exist or is not visible.'),
    Conflict: error('CONFLICT: unique-key violation, `If-Match` mismatch (re-read and retry), or foreign-key restrict.'),
    PayloadTooLarge: error('Body above the 10 MiB REST limit.'),
    ValidationFailed: error('VALIDATION_FAILED: invalid field value, malformed JSON, invalid filter, page or batch size above policy.'),
    QuotaExceeded: error('QUOTA_EXCEEDED: quota exhausted; `retryable` is false until the window resets.', {
      'X-Service-Quota-Kind': headerRef('QuotaKind'),
      'X-Service-Quota-Limit': headerRef('QuotaLimit'),
      'X-Service-Quota-Used': headerRef('QuotaUsed'),
      'X-Service-Quota-Reset': headerRef('QuotaReset'),
    }),
    BadGateway: error('BRIDGE_ERROR: authored code failed (`Handler.Threw`, `Handler.MemoryLimit`, `Handler.ResultInvalid`, `Handler.OutputInvalid`).'),
    Unavailable: error('UNAVAILABLE: the node cannot serve this now (not ready, draining); `retryable` is true.'),
    GatewayTimeout: error('BRIDGE_ERROR: authored code hit a time limit (`Handler.CpuLimit`, `Handler.WallClockLimit`).'),
    Error: error('Any other error (5xx included), in the same envelope.'),
  };
}

/** Error responses for the given statuses (ascending), then `default`. */
export function errorResponses(statuses: readonly number[]): Json {
  const out: Json = {};
  for (const s of [...new Set(statuses)].sort((a, b) => a - b)) out[String(s)] = responseRef(ERROR_RESPONSE_NAMES[String(s)]!);
  out.default = responseRef('Error');
  return out;
}

export function securitySchemes(): Json {
  return {
    bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User or service access token (JWT) issued by the project\'s identity provider (`/identity/login`).' },
    adminToken: { type: 'http', scheme: 'bearer', description: 'Platform admin token (`SERVICE_ADMIN_TOKEN`), platform-admin authority.' },
    apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'API key / service credential for CI and server-to-server calls, sent as `Authorization: Bearer <api key>`; maps to a service profile and grant set.' },
    mcpBearer: { type: 'http', scheme: 'bearer', description: 'MCP access token, bound to an MCP exposure (MCP routes; not used by this REST surface).' },
    tenantHeader: { type: 'apiKey', in: 'header', name: 'X-Service-Tenant', description: 'Tenant slug or canonical id (scope, required with every credential).' },
    projectHeader: { type: 'apiKey', in: 'header', name: 'X-Service-Project', description: 'Project slug or canonical id (scope, required with every credential).' },
  };
}

/** Any credential together with the scope headers. */
export const globalSecurity = (): Json[] =>
  ['bearerAuth', 'apiKey', 'adminToken'].map((s) => ({ [s]: [], tenantHeader: [], projectHeader: [] }));

/** Scope headers only (open routes: register, login, refresh). */
export const scopeOnlySecurity = (): Json[] => [{ tenantHeader: [], projectHeader: [] }];

export const scopeHeaderParams = (): Json[] => [paramRef('TenantHeader'), paramRef('ProjectHeader'), paramRef('BranchHeader')];
