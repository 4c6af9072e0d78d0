import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { RowValues } from '../entities/input.js';
import { filterTarget } from '../entities/list.js';
import type { SortKey } from '../entities/list-params.js';
import type { FilterNode } from '../filter/ast.js';
import type { SqlFilterTarget, SqlParams } from '../filter/to-sql.js';
import type { Actor } from '../identity/actor.js';
import { CompiledPolicy, type PolicyVerb, type VerbPolicy } from './compiled-policy.js';
import { deniedByMissingClaim, deniedByPolicy } from './grant-policy.js';

/**
 * One request's view of its caller's compiled policy (ctx.rowPolicy): the
 * shared CompiledPolicy plus the actor whose `$actor` values fill it. Built
 * by stage 5 only for callers whose grants carry policy parts.
 */
export class RowPolicy {
  constructor(readonly compiled: CompiledPolicy, readonly actor: Actor) {}

  verb(entity: CompiledEntity, verb: PolicyVerb): VerbPolicy {
    return this.compiled.verb(entity, verb);
  }

  read(entity: CompiledEntity): VerbPolicy {
    return this.compiled.verb(entity, 'read');
  }

  /** 403 `Access.DeniedByMissingClaim` when every grant for the verb needs an `$actor` value the caller lacks. */
  requireLive(entity: CompiledEntity, verb: PolicyVerb): void {
    const v = this.verb(entity, verb);
    if (v.hasActorRefs && v.parts.length > 0 && v.live(this.actor).length === 0) throw deniedByMissingClaim();
  }

  /** SQL limiting `entity`'s rows for `verb` over `alias`; null when the caller may touch every row. */
  rowsSql(entity: CompiledEntity, verb: PolicyVerb, alias: string, params: SqlParams, depth = 0): string | null {
    return this.verb(entity, verb).rowsSql(this.actor, alias, params, depth);
  }

  /** The filter target for a request's filter on `entity`: a related entity it enters adds the caller's read policy on it. */
  target(entity: CompiledEntity): SqlFilterTarget {
    const base = filterTarget(entity);
    return {
      ...base,
      relatedPolicy: (name, alias, depth, params) => this.rowsSql(name === entity.entityName ? entity : entity.peer(name), 'read', alias, params, depth),
    };
  }

  /** 403 when a request filter (directly or through a relation) names a field masked from the caller. */
  guardFilter(entity: CompiledEntity, node: FilterNode | null): void {
    if (node === null) return;
    const masked = this.read(entity).masked;
    const walk = (n: FilterNode, e: CompiledEntity, hidden: readonly string[]): void => {
      switch (n.kind) {
        case 'and':
        case 'or':
          for (const i of n.items) walk(i, e, hidden);
          break;
        case 'not':
          walk(n.item, e, hidden);
          break;
        case 'related': {
          if (hidden.includes(n.field)) throw deniedByPolicy(`field '${n.field}' is not readable`, n.field);
          const rel = e.peer(n.entity);
          walk(n.item, rel, this.read(rel).masked);
          break;
        }
        case 'cmp':
          if (hidden.includes(n.field)) throw deniedByPolicy(`field '${n.field}' is not readable`, n.field);
      }
    };
    if (masked.length > 0 || hasRelated(node)) walk(node, entity, masked);
  }

  /** 403 when a sort key is masked from the caller. */
  guardSort(entity: CompiledEntity, sort: readonly SortKey[]): void {
    const masked = this.read(entity).masked;
    if (masked.length === 0) return;
    for (const k of sort) if (masked.includes(k.field)) throw deniedByPolicy(`field '${k.field}' is not readable`, k.field);
  }

  /** 403 naming the first field the write sets outside the caller's writable fields. */
  guardWritable(entity: CompiledEntity, verb: 'insert' | 'update', input: RowValues): void {
    const writable = this.verb(entity, verb).fields;
    if (writable === null) return;
    for (const f of input.fields) if (!writable.has(f.name)) throw deniedByPolicy(`field '${f.name}' is not writable`, f.name);
  }

  /** Drops masked fields from a row the caller receives (write answers; reads select without them). */
  maskRow(entity: CompiledEntity, row: Record<string, unknown>): Record<string, unknown> {
    const masked = this.read(entity).masked;
    for (const f of masked) delete row[f];
    return row;
  }
}

const hasRelated = (n: FilterNode): boolean => {
  switch (n.kind) {
    case 'and':
    case 'or':
      return n.items.some(hasRelated);
    case 'not':
      return hasRelated(n.item);
    case 'related':
      return true;
    case 'cmp':
      return false;
  }
};

export { CompiledPolicy };
