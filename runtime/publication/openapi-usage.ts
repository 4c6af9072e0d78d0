/**
 * Usage metering routes (docs/usage.md): events and rollups of a project,
 * platform admin only; the project from the path or from the scope headers.
 * Registered by openapi-static.ts.
 */
import { dateTimeSchema, listEnvelope, schemaRef, type Json } from './openapi-components.js';
import type { StaticOp } from './openapi-static-op.js';

export const USAGE_SCHEMA_NAMES = ['UsageEvent', 'UsageEventList', 'UsageMeterRollup', 'UsageRollupList'] as const;

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

export function usageSchemas(): Json {
  return {
    UsageEvent: {
      type: 'object', required: ['id', 'kind', 'quantity', 'at', 'operationId', 'correlationId'],
      description: 'One metered operation (append-only).',
      properties: {
        id: str('Position of the event (decimal string).'),
        kind: str('`read.monthly`, `write.monthly`, `realtime.subscriptions`, `webhook.deliveries.monthly`, or `<kind>.overage`.'),
        quantity: { type: 'integer', minimum: 0, description: 'Units: 1 per read, the rows written for a write.' },
        at: dateTimeSchema(),
        operationId: str(),
        correlationId: str(),
        dimensions: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    UsageEventList: listEnvelope(schemaRef('UsageEvent')),
    UsageMeterRollup: {
      type: 'object', required: ['kind', 'window', 'windowStart', 'quantity'],
      properties: {
        kind: str(),
        window: { type: 'string', enum: ['hour', 'day', 'calendar-month'] },
        windowStart: { ...dateTimeSchema(), description: 'UTC start of the window.' },
        quantity: { type: 'integer', minimum: 0 },
      },
    },
    UsageRollupList: {
      type: 'object', required: ['data'],
      properties: { data: { type: 'array', items: schemaRef('UsageMeterRollup') } },
    },
  };
}

const query = (name: string, description: string, schema: Json): Json => ({ name, in: 'query', required: false, description, schema });

export function usageParameters(): Json {
  return {
    UsageProjectId: { name: 'projectId', in: 'path', required: true, description: 'Project id.', schema: { type: 'string', format: 'uuid' } },
    UsageKind: query('kind', 'Only this kind.', { type: 'string' }),
    UsageOperationId: query('operationId', 'Only this operation id.', { type: 'string' }),
    UsageFrom: query('from', 'At or after this instant (ISO 8601).', dateTimeSchema()),
    UsageTo: query('to', 'Before this instant (ISO 8601).', dateTimeSchema()),
    UsageWindow: query('window', 'Rollup window (default `calendar-month`).', { type: 'string', enum: ['hour', 'day', 'calendar-month'] }),
  };
}

const TAG = 'Usage';
const ERRORS = [401, 403, 404, 422];
const EVENT_PARAMS = ['UsageKind', 'UsageOperationId', 'UsageFrom', 'UsageTo', 'PageSize', 'Cursor'];
const ROLLUP_PARAMS = ['UsageWindow', 'UsageKind', 'UsageFrom', 'UsageTo'];
const EVENTS = 'Usage events of the project in time order (admin only)';
const ROLLUPS = 'Usage per kind and window start; totals equal the events (admin only)';

export const USAGE_OPS: StaticOp[] = [
  { method: 'get', path: '/Usage/{projectId}/events', operationId: 'Usage.Events.List', tag: TAG, auth: 'admin', unscoped: true, summary: EVENTS, params: ['UsageProjectId', ...EVENT_PARAMS], status: 200, response: 'UsageEventList', errors: ERRORS },
  { method: 'get', path: '/usage/events', operationId: 'Usage.Events.ListScoped', tag: TAG, auth: 'admin', summary: EVENTS, params: EVENT_PARAMS, status: 200, response: 'UsageEventList', errors: ERRORS },
  { method: 'get', path: '/Usage/{projectId}/rollups', operationId: 'Usage.Rollups.List', tag: TAG, auth: 'admin', unscoped: true, summary: ROLLUPS, params: ['UsageProjectId', ...ROLLUP_PARAMS], status: 200, response: 'UsageRollupList', errors: ERRORS },
  { method: 'get', path: '/usage/rollups', operationId: 'Usage.Rollups.ListScoped', tag: TAG, auth: 'admin', summary: ROLLUPS, params: ROLLUP_PARAMS, status: 200, response: 'UsageRollupList', errors: ERRORS },
];
