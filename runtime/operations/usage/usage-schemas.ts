/**
 * Schemas of the usage and quota operations (CONTRACT "Usage and quotas";
 * docs/usage.md), referred to by their contracts in index.ts and quotas.ts.
 */
import { dateTimeSchema, uuidSchema } from '../../publication/openapi-components.js';
import { QUOTA_KINDS, QUOTA_MODES } from '../../quota/catalog.js';
import { defineSchemas, ref, type Json } from '../contract/index.js';
import { dataList, dataSingle, metaSchema } from '../envelope-schemas.js';

const str = (description?: string): Json => (description === undefined ? { type: 'string' } : { type: 'string', description });

/**
 * A quota window (runtime/quota/catalog.ts `parseWindow`): a calendar window or `rolling-<n><m|h|d>`.
 * A rolling span above a year matches the pattern and is refused by the quota's own check (runtime/quota/body.ts).
 */
const WINDOW_PATTERN = '^(calendar-month|day|hour|rolling-[1-9][0-9]{0,3}[mhd])$';
const WINDOW_TEXT = '`calendar-month` (default), `day`, `hour`, or `rolling-<n><m|h|d>` of at most a year.';
/**
 * Dimensions narrow what a quota counts (`{ "entity": "Note" }`). Only the object and its size are in
 * the schema: the keys' and values' checks stay in runtime/quota/body.ts so a 422 names `dimensions`
 * itself, as it always has, not `dimensions.<key>`.
 */
const DIMENSIONS: Json = {
  type: ['object', 'null'], maxProperties: 8,
  description: 'At most 8 string keys (1–128 chars) to string values (at most 128 chars). A `realtime.subscriptions` quota takes none.',
};
const KIND_TEXT = `One of ${QUOTA_KINDS.map((k) => `\`${k}\``).join(', ')}.`;
const MODE_TEXT = '`hard` refuses past the limit (429), `soft` admits and counts overage, `monitor` only counts, `reservation` holds units while the operation runs.';

export const USAGE_SCHEMAS = defineSchemas({
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
  UsageEventList: dataList(ref('UsageEvent')),
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
    properties: { data: { type: 'array', items: ref('UsageMeterRollup') }, meta: metaSchema() },
  },
  UsageQuota: {
    type: 'object', required: ['id', 'tenantId', 'projectId', 'kind', 'limit', 'mode', 'window', 'dimensions', 'state', 'createdAt', 'updatedAt'],
    description: 'A quota of the project: what it counts, its limit and what happens past it.',
    properties: {
      id: uuidSchema(),
      tenantId: uuidSchema(),
      projectId: uuidSchema(),
      kind: { type: 'string', enum: [...QUOTA_KINDS] },
      limit: { type: 'integer', minimum: 0 },
      mode: { type: 'string', enum: [...QUOTA_MODES] },
      window: str(WINDOW_TEXT),
      dimensions: { type: 'object', additionalProperties: { type: 'string' } },
      state: str(),
      createdAt: dateTimeSchema(),
      updatedAt: dateTimeSchema(),
    },
  },
  // Unknown properties are ignored, as they always were: no `additionalProperties: false`.
  UsageQuotaInput: {
    type: 'object', required: ['kind', 'limit', 'mode'],
    properties: {
      kind: { type: 'string', enum: [...QUOTA_KINDS], description: KIND_TEXT },
      limit: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Units per window (concurrent subscriptions for `realtime.subscriptions`).' },
      mode: { type: 'string', enum: [...QUOTA_MODES], description: MODE_TEXT },
      window: { type: ['string', 'null'], pattern: WINDOW_PATTERN, description: `${WINDOW_TEXT} Null: the default.` },
      dimensions: DIMENSIONS,
    },
  },
  UsageQuotaPatch: {
    type: 'object', description: 'Only the fields present (and not null) change; each is checked as in a create.',
    properties: {
      kind: { type: ['string', 'null'], enum: [...QUOTA_KINDS, null], description: KIND_TEXT },
      limit: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      mode: { type: ['string', 'null'], enum: [...QUOTA_MODES, null], description: MODE_TEXT },
      window: { type: ['string', 'null'], pattern: WINDOW_PATTERN, description: WINDOW_TEXT },
      dimensions: DIMENSIONS,
    },
  },
  UsageQuotaSingle: dataSingle(ref('UsageQuota')),
  UsageQuotaList: dataList(ref('UsageQuota')),
  UsageQuotaSummary: dataSingle({
    type: 'array', description: 'Each active quota with its usage in the current window (governance caps included, `quotaId` `governance:<kind>`).',
    items: {
      type: 'object', required: ['quotaId', 'kind', 'mode', 'limit', 'used'],
      properties: { quotaId: str(), kind: str(), mode: str(), limit: { type: 'number' }, used: { type: 'number', minimum: 0 } },
    },
  }),
});
