import type { CompiledEntity } from '../entities/compiled-entity.js';
import { toSqlParam } from '../entities/field-values.js';
import { filterTarget } from '../entities/list.js';
import type { FilterNode } from '../filter/ast.js';
import { parsePolicyFilter } from '../filter/parse.js';
import { filterToSql, SqlParams } from '../filter/to-sql.js';
import type { Actor } from '../identity/actor.js';
import type { FieldDef } from '../publication/model.js';
import { ActorRef, actorValue } from './actor-ref.js';

/** An `$actor` parameter slot: filled per request from the caller, typed by the field it compares with. */
class ActorSlot {
  constructor(readonly ref: ActorRef, readonly field: FieldDef) {}
}

/** A filter compiled once: SQL pieces around parameter slots (constants, or ActorSlots). */
interface Fragment {
  pieces: string[];
  slots: unknown[];
}

const SLOT = '\u0001';

/** Records parameters instead of numbering them; the request numbers them when it renders the fragment. */
class SlotParams extends SqlParams {
  readonly slots: unknown[] = [];
  override add(value: unknown): string {
    this.slots.push(value);
    return SLOT;
  }
}

/** Replaces each ActorRef value by an ActorSlot carrying the field it is compared with. */
function bindSlots(node: FilterNode, entity: CompiledEntity): FilterNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { kind: node.kind, items: node.items.map((n) => bindSlots(n, entity)) };
    case 'not':
      return { kind: 'not', item: bindSlots(node.item, entity) };
    case 'related':
      return { ...node, item: bindSlots(node.item, entity.peer(node.entity)) };
    case 'cmp': {
      const f = entity.queryableFields.get(node.field)!;
      const bind = (v: unknown): unknown => (v instanceof ActorRef ? new ActorSlot(v, f) : v);
      return { ...node, value: Array.isArray(node.value) ? node.value.map(bind) : bind(node.value) };
    }
  }
}

/** One grant's rowFilter or check on one entity, parsed once; its SQL compiled once per alias. */
export class PolicyFilter {
  private readonly fragments = new Map<string, Fragment>();
  readonly slots: ActorSlot[] = [];

  /** `raw` is as the admin wrote it; a filter that no longer parses (the schema changed since) covers no row. */
  constructor(readonly raw: unknown, private readonly entity: CompiledEntity, private readonly node: FilterNode | null) {
    if (node !== null) this.collect(node);
  }

  private collect(n: FilterNode): void {
    if (n.kind === 'and' || n.kind === 'or') n.items.forEach((i) => this.collect(i));
    else if (n.kind === 'not' || n.kind === 'related') this.collect(n.item);
    else for (const v of Array.isArray(n.value) ? n.value : [n.value]) if (v instanceof ActorSlot) this.slots.push(v);
  }

  /** Whether every `$actor` value resolves for this caller (else the grant covers no row). */
  resolves(actor: Actor): boolean {
    for (const s of this.slots) if (actorValue(actor, s.ref, s.field) === undefined) return false;
    return true;
  }

  /** The SQL over `alias`, parameters appended to `params`, `$actor` values substituted. */
  render(alias: string, depth: number, params: SqlParams, actor: Actor): string {
    const key = `${alias}|${depth}`;
    let frag = this.fragments.get(key);
    if (frag === undefined) {
      if (this.node === null) frag = { pieces: ['FALSE'], slots: [] };
      else {
        const rec = new SlotParams();
        const text = filterToSql(this.node, this.entity.entityName, alias, filterTarget(this.entity), rec, depth);
        frag = { pieces: text.split(SLOT), slots: rec.slots };
      }
      this.fragments.set(key, frag);
    }
    let out = frag.pieces[0]!;
    for (let i = 0; i < frag.slots.length; i++) {
      const s = frag.slots[i];
      const v = s instanceof ActorSlot ? toSqlParam(s.field, actorValue(actor, s.ref, s.field)) : s;
      out += params.add(v) + frag.pieces[i + 1]!;
    }
    return out;
  }

  /** The filter as JSON with `$actor` values substituted (explainability, the decision trace). */
  evaluated(actor: Actor): unknown {
    return substituteActor(this.raw, actor);
  }
}

/** A grant filter as JSON with each `{ "$actor": … }` replaced by the caller's value (null when it has none). */
export function substituteActor(raw: unknown, actor: Actor): unknown {
  if (Array.isArray(raw)) return raw.map((x) => substituteActor(x, actor));
  if (typeof raw !== 'object' || raw === null) return raw;
  const o = raw as Record<string, unknown>;
  if (typeof o.$actor === 'string' && Object.keys(o).length === 1) {
    const src = o.$actor;
    return (src === 'subjectId' ? actor.subjectId : src.startsWith('claims.') ? actor.claims[src.slice(7)] : undefined) ?? null;
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, substituteActor(v, actor)]));
}

export function parsedOrNull(raw: unknown, entity: CompiledEntity): FilterNode | null {
  try {
    return bindSlots(parsePolicyFilter(raw, entity), entity);
  } catch {
    return null;
  }
}

