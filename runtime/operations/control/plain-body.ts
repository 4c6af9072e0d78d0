/**
 * Schema pieces that say in JSON Schema what body.ts `readBody` checked by
 * hand: a string field is at most 200 characters without NUL, an optional one
 * may be null, nothing unlisted is accepted. The reasons of those 422s
 * (`<prefix>.UnknownProperty|MissingProperty|InvalidProperty`) come from the
 * contract's `reasons.prefix`.
 *
 * Patterns a handler checks with a reason of its own (`Organization.InvalidSlug`,
 * `Foundation.InvalidVersion`) are not in the schema: the validator gives a
 * field one reason for missing and invalid alike, and those fields answer
 * `<prefix>.MissingProperty` when absent. The handlers keep those checks, and
 * the descriptions say what they take.
 */
import type { Json } from '../contract/index.js';

/** readBody's string: ajv counts code points where readBody counted UTF-16 units, so a string of astral characters may be up to twice as long. */
export const plainString = (description?: string): Json => ({
  type: 'string', maxLength: 200, pattern: '^[^\\u0000]*$', ...(description === undefined ? {} : { description }),
});

/** An optional string field: absent or null means "not given", as readBody took it. */
export const optionalString = (description?: string): Json => ({ ...plainString(description), type: ['string', 'null'] });

/** A body object of exactly these properties. */
export const plainBody = (required: readonly string[], properties: Record<string, Json>, description?: string): Json => ({
  type: 'object', required: [...required], additionalProperties: false, properties, ...(description === undefined ? {} : { description }),
});
