import { GraphQLError, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { aliasCount, GRAPHQL_LIMITS } from './limits.js';

/** Documents kept per publication; a client's handful of queries, not every query it could send. */
const MAX_DOCUMENTS = 500;
/** Tokens in one document: a 1 MB body of `{a a a …}` would otherwise cost seconds of parsing. */
const MAX_TOKENS = 20_000;

export type CheckedDocument = { ok: true; document: DocumentNode } | { ok: false; errors: readonly GraphQLError[]; reasonCode: string };

/**
 * Parsed and validated documents by their text, for one schema (kept with
 * its publication): a repeated query skips parse and validate. A document
 * with more aliases than the limit is refused between the two. Validation
 * does not depend on variables, so its verdict is cached with the document;
 * failures are cached too (a client retrying a broken query costs nothing).
 * Least recently used documents leave first.
 */
export class DocumentCache {
  private readonly docs = new Map<string, CheckedDocument>();

  constructor(private readonly schema: GraphQLSchema) {}

  get(text: string): CheckedDocument {
    const hit = this.docs.get(text);
    if (hit !== undefined) {
      // Map order is insertion order: re-inserting marks it recently used.
      this.docs.delete(text);
      this.docs.set(text, hit);
      return hit;
    }
    const checked = this.check(text);
    this.docs.set(text, checked);
    if (this.docs.size > MAX_DOCUMENTS) this.docs.delete(this.docs.keys().next().value!);
    return checked;
  }

  private check(text: string): CheckedDocument {
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: MAX_TOKENS });
    } catch (err) {
      return { ok: false, errors: [err as GraphQLError], reasonCode: 'GraphQL.SyntaxError' };
    }
    // Before validation, whose cost grows faster than the document (the probe's 1,800 aliases: ~0.4 s of one core).
    const aliases = aliasCount(document);
    if (aliases > GRAPHQL_LIMITS.maxAliases) {
      return { ok: false, errors: [new GraphQLError(`the document has ${aliases} aliases; at most ${GRAPHQL_LIMITS.maxAliases}`)], reasonCode: 'GraphQL.TooManyAliases' };
    }
    const errors = validate(this.schema, document);
    return errors.length > 0 ? { ok: false, errors, reasonCode: 'GraphQL.InvalidDocument' } : { ok: true, document };
  }
}
