/**
 * JSON Schemas of the data envelopes envelopes.ts builds (`single`, `list`), for
 * operation contracts. `meta` and `page` are written out rather than `$ref`ed to
 * the document's shared `Meta`/`Page` components: the request and answer
 * validators (contract/validate-body.ts) resolve only schemas declared with
 * `defineSchemas`.
 */
import type { Json } from './contract/index.js';

const META: Json = {
  type: 'object', required: ['correlationId'],
  properties: { correlationId: { type: 'string', description: 'Same value as the `X-Service-Correlation-Id` header.' } },
};

const PAGE: Json = {
  type: 'object', required: ['number', 'size'],
  properties: {
    number: { type: 'integer', minimum: 1, description: 'Page number, 1-indexed.' },
    size: { type: 'integer', minimum: 0 },
    totalCount: { type: 'integer', minimum: 0 },
    next: { type: ['string', 'null'], description: 'Opaque cursor of the next page (pass as `cursor`).' },
    prev: { type: ['string', 'null'], description: 'Opaque cursor of the previous page.' },
  },
};

/** `{ data, meta }`. */
export const dataSingle = (data: Json, description?: string): Json => ({
  type: 'object', ...(description === undefined ? {} : { description }), required: ['data', 'meta'], properties: { data, meta: META },
});

/** `{ data: [...], page, meta }`. */
export const dataList = (item: Json): Json => ({ type: 'object', required: ['data', 'page', 'meta'], properties: { data: { type: 'array', items: item }, page: PAGE, meta: META } });

/** `meta` alone, for an envelope of another shape (`{ data, meta }` without a page). */
export const metaSchema = (): Json => META;
