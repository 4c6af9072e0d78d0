import type { Invocation } from '../operations/types.js';
import { kindOf, shown, unstorableTextError, unstorableTextIn, unstorableValue, type UnstorableText } from '../storable-text.js';

/**
 * dispatch()'s input check (runtime/storable-text.ts says which text and why):
 * every string of a request's Invocation, whatever the protocol built it from.
 */

/** Header-borne values of an Invocation, by the header name a caller would recognise. */
const HEADER_FIELDS = [
  ['tenantHeader', 'X-Service-Tenant'],
  ['projectHeader', 'X-Service-Project'],
  ['branchHeader', 'X-Service-Branch'],
  ['idempotencyKey', 'Idempotency-Key'],
  ['ifMatch', 'If-Match'],
  ['lastEventId', 'Last-Event-ID'],
] as const;

/**
 * The first unstorable character anywhere in a request's input: headers,
 * path segments (by parameter name), the entity collection and relation
 * segments, query parameters (names and values), entity arguments and the
 * body (values and keys). The bearer is left out: it is only ever verified
 * or hashed, never stored or compared in SQL as text.
 */
export function unstorableTextOfInvocation(inv: Invocation): UnstorableText | null {
  for (let i = 0; i < HEADER_FIELDS.length; i++) {
    const v = inv[HEADER_FIELDS[i]![0]];
    if (typeof v === 'string') {
      const kind = kindOf(v);
      if (kind !== null) return { field: HEADER_FIELDS[i]![1], kind };
    }
  }
  if (inv.headers !== undefined) {
    for (const name of Object.keys(inv.headers)) {
      const kind = kindOf(inv.headers[name]!);
      if (kind !== null) return { field: name, kind };
    }
  }
  const inCollection = inv.collection === null ? null : kindOf(inv.collection);
  if (inCollection !== null) return { field: 'collection', kind: inCollection };
  const inRelation = inv.relation === null ? null : kindOf(inv.relation);
  if (inRelation !== null) return { field: 'relation', kind: inRelation };
  const inParams = unstorableTextIn(inv.params);
  if (inParams !== null) return inParams;
  for (const [name, value] of inv.query) {
    const found = unstorableValue(name, value);
    if (found !== null) return found;
  }
  // REST derives args from the query (checked above); GraphQL, gRPC and MCP build them from their own input.
  if (inv.args !== undefined && inv.protocol !== 'rest') {
    const args = inv.args as Readonly<Record<string, unknown>>;
    for (const name in args) {
      const value = args[name];
      const found = typeof value === 'string' ? unstorableValue(name, value) : unstorableTextIn(value, name);
      if (found !== null) return found;
    }
  }
  return unstorableTextIn(inv.body);
}

/** dispatch()'s check: throws the 422 when any input of the request holds unstorable text. */
export function refuseUnstorableInput(inv: Invocation): void {
  const found = unstorableTextOfInvocation(inv);
  if (found !== null) throw unstorableTextError(found);
}
