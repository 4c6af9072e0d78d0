import { CLAIM_NAME_RE } from '../identity/claims.js';
import { checkFieldValue } from '../entities/field-values.js';
import type { FieldDef } from '../publication/model.js';

/**
 * `{ "$actor": "subjectId" }` or `{ "$actor": "claims.<name>" }` inside a
 * grant's rowFilter or check (CONTRACT: Row policy). The parser keeps it as
 * this marker in the filter tree; the compiled SQL carries a parameter slot
 * for it, filled per request from the caller's token.
 */
export class ActorRef {
  constructor(readonly source: string) {}
  /** Unresolved, it prints as it was written (explainability, logs). */
  toJSON(): unknown {
    return { $actor: this.source };
  }
}

const SOURCE_RE = new RegExp(`^(subjectId|claims\\.${CLAIM_NAME_RE.source.slice(1, -1)})$`);

/** Whether `raw` is written as an actor reference (an object whose only key is `$actor`). */
export const isActorRefShape = (raw: unknown): raw is { $actor: unknown } =>
  typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 1 && Object.prototype.hasOwnProperty.call(raw, '$actor');

/** The ref, or null when its source is neither `subjectId` nor `claims.<name>`. */
export function actorRefOf(raw: { $actor: unknown }): ActorRef | null {
  return typeof raw.$actor === 'string' && SOURCE_RE.test(raw.$actor) ? new ActorRef(raw.$actor) : null;
}

/** What a ref reads of the caller (identity/actor.ts's Actor has them). */
export interface ActorFacts {
  subjectId: string | null;
  claims: Readonly<Record<string, string>>;
}

/**
 * The caller's value for a ref, or undefined when it has none (no subject,
 * claim missing) or the value does not fit the field's type: such a grant
 * covers no row (it never matches null, never fails in SQL).
 */
export function actorValue(actor: ActorFacts, ref: ActorRef, field: FieldDef): unknown {
  const v = ref.source === 'subjectId' ? actor.subjectId : actor.claims[ref.source.slice('claims.'.length)];
  if (v === undefined || v === null) return undefined;
  return checkFieldValue(field, v) === null ? v : undefined;
}
