import { createHash } from 'node:crypto';
import { ServiceError, accessDenied, validationFailed } from '../errors/service-error.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import { parsePolicyFilter } from '../filter/parse.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';

/** One held grant with its row-policy parts (CONTRACT: Row policy and field masks). Absent part: no limit. */
export interface PolicyGrant {
  grant: string;
  rowFilter?: unknown;
  check?: unknown;
  fields?: readonly string[];
}

/**
 * Every grant a caller holds, when at least one of them carries a policy
 * part; `key` names the set (equal sets, equal keys), so the compiled
 * policy is shared by every caller holding the same grants. A caller whose
 * grants carry no policy has no GrantPolicySet at all (null): the hot path.
 */
export interface GrantPolicySet {
  readonly key: string;
  readonly grants: readonly PolicyGrant[];
}

export const hasPolicyParts = (g: PolicyGrant): boolean => g.rowFilter !== undefined || g.check !== undefined || g.fields !== undefined;

/** The set for these grants, or null when none carries a policy part. */
export function grantPolicySet(grants: readonly PolicyGrant[]): GrantPolicySet | null {
  if (!grants.some(hasPolicyParts)) return null;
  const lines = [...new Set(grants.map((g) => JSON.stringify([g.grant, g.rowFilter ?? null, g.check ?? null, g.fields ?? null])))].sort();
  const key = createHash('sha256').update(lines.join('\n')).digest('base64url');
  return { key, grants: lines.map((l) => {
    const [grant, rowFilter, check, fields] = JSON.parse(l) as [string, unknown, unknown, string[] | null];
    const g: PolicyGrant = { grant };
    if (rowFilter !== null) g.rowFilter = rowFilter;
    if (check !== null) g.check = check;
    if (fields !== null) g.fields = fields;
    return g;
  }) };
}

/** Fields readable whatever a read grant's `fields` says. */
export const ALWAYS_READABLE: ReadonlySet<string> = new Set(['id', 'createdAt', 'updatedAt', 'concurrencyToken']);

export const deniedByPolicy = (message: string, field?: string): ServiceError =>
  accessDenied('Access.DeniedByPolicy', message, field === undefined ? {} : { field });

export const deniedByMissingClaim = (): ServiceError =>
  accessDenied('Access.DeniedByMissingClaim', 'the grants for this operation need a claim your token does not carry');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_FIELDS = 500;

/** The entities a grant string covers in a publication (`*` → every entity). */
export function entitiesOfGrant(pub: CompiledPublication, grant: string): CompiledEntity[] {
  const name = grant.split(':')[1]!;
  if (name === '*') return [...pub.entities.values()];
  const e = pub.entities.get(name);
  return e === undefined ? [] : [e];
}

/**
 * Checks a grant's policy parts against the live publication, at creation
 * (never at request time): filters in the one filter shape with `$actor`
 * values, `fields` naming known fields. A wildcard entity grant is checked
 * against every entity (each must know every field it names). 422
 * VALIDATION_FAILED naming `<prefix>rowFilter.<path>` etc.
 */
export function validateGrantPolicy(pub: CompiledPublication, g: PolicyGrant, prefix: string, block: string): void {
  if (!hasPolicyParts(g)) return;
  const entities = entitiesOfGrant(pub, g.grant);
  if (entities.length === 0) throw validationFailed(`${block}.UnknownEntity`, 'a grant with rowFilter, check or fields needs an entity of the live publication', `${prefix}grant`);
  const verb = g.grant.split(':')[2]!;
  if (g.check !== undefined && verb !== 'insert' && verb !== 'update' && verb !== '*') {
    throw validationFailed(`${block}.InvalidCheck`, 'check applies to insert and update grants', `${prefix}check`);
  }
  if (g.rowFilter !== undefined && verb === 'insert') {
    throw validationFailed(`${block}.InvalidRowFilter`, 'rowFilter applies to read, update and delete grants; insert grants take check', `${prefix}rowFilter`);
  }
  for (const part of ['rowFilter', 'check'] as const) {
    const raw = g[part];
    if (raw === undefined) continue;
    if (!isObject(raw)) throw validationFailed(`${block}.InvalidFilter`, `${part} must be a filter object`, `${prefix}${part}`);
    for (const e of entities) {
      try {
        parsePolicyFilter(raw, e);
      } catch (err) {
        if (!ServiceError.is(err)) throw err;
        const at = (err.details.field ?? 'filter').replace(/^filter/, `${prefix}${part}`);
        throw new ServiceError(err.code, err.reasonCode, `${part} on ${e.entityName}: ${err.message}`, { field: at });
      }
    }
  }
  if (g.fields !== undefined) {
    const fields: unknown = g.fields;
    if (!Array.isArray(fields) || fields.length > MAX_FIELDS || !fields.every((f) => typeof f === 'string')) {
      throw validationFailed(`${block}.InvalidFields`, 'fields must be a list of field names', `${prefix}fields`);
    }
    fields.forEach((f: string) => {
      for (const e of entities) {
        if (!ALWAYS_READABLE.has(f) && !e.userFieldByName.has(f)) {
          throw validationFailed(`${block}.UnknownField`, `unknown field '${f.slice(0, 64)}' on ${e.entityName}`, `${prefix}fields`);
        }
      }
    });
  }
}
