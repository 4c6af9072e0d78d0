import { quoteIdent } from '../../storage/index.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import { SqlParams } from '../filter/to-sql.js';
import type { Actor } from '../identity/actor.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { parsedOrNull, PolicyFilter } from './policy-filter.js';
import { statementName } from './statement-names.js';
import { ALWAYS_READABLE, type GrantPolicySet, type PolicyGrant } from './grant-policy.js';

export type PolicyVerb = 'read' | 'insert' | 'update' | 'delete';
const VERB_INDEX: Record<PolicyVerb, number> = { read: 0, insert: 1, update: 2, delete: 3 };

const UNSET = Symbol('unset');

export interface PointRead {
  sql: string;
  name: string;
  /** Parameters after `$1`. */
  values: unknown[];
  /** Whether the row filter limits rows (a miss may then be a 403, not a 404). */
  limited: boolean;
}

interface ActorView {
  live: GrantPart[];
  evaluated: unknown;
  point: PointRead | null;
}

/** One covering grant's parts on one entity and verb. */
interface GrantPart {
  rows: PolicyFilter | null;
  check: PolicyFilter | null;
}

/**
 * What the caller's grants allow for one entity and verb: the union of the
 * covering grants. Rows: any grant without rowFilter → every row, else the
 * OR of their filters. Fields: any grant without `fields` → every field,
 * else the union. Checks: any grant without check → none, else the OR.
 */
export class VerbPolicy {
  readonly parts: readonly GrantPart[];
  /** True when some covering grant has no rowFilter (and no `$actor` to miss). */
  readonly allRows: boolean;
  /** True when some covering grant has neither check nor `$actor` values. */
  readonly noCheck: boolean;
  readonly hasActorRefs: boolean;
  /** Readable (read) or writable (insert/update) fields; null: all. */
  readonly fields: ReadonlySet<string> | null;
  /** Read: user fields outside the readable set, sorted. */
  readonly masked: readonly string[];
  /** Read: the select list without masked columns (`t."col", …`), and unqualified for RETURNING. */
  readonly selectList: string;
  readonly returningList: string;

  constructor(readonly entity: CompiledEntity, grants: readonly PolicyGrant[], verb: PolicyVerb) {
    const parts: GrantPart[] = [];
    let fields: Set<string> | null = new Set();
    for (const g of grants) {
      const [, e, v] = g.grant.split(':');
      if ((e !== '*' && e !== entity.entityName) || (v !== '*' && v !== verb)) continue;
      const usesRows = verb !== 'insert';
      const usesCheck = verb === 'insert' || verb === 'update';
      parts.push({
        rows: usesRows && g.rowFilter !== undefined ? new PolicyFilter(g.rowFilter, entity, parsedOrNull(g.rowFilter, entity)) : null,
        check: usesCheck && g.check !== undefined ? new PolicyFilter(g.check, entity, parsedOrNull(g.check, entity)) : null,
      });
      if (verb !== 'delete') {
        if (g.fields === undefined) fields = null;
        // A list stored before validation existed that is not a list of names grants no field (fail closed).
        else if (fields !== null && Array.isArray(g.fields)) for (const f of g.fields) if (typeof f === 'string') fields.add(f);
      }
    }
    this.parts = parts;
    this.hasActorRefs = parts.some((p) => (p.rows?.slots.length ?? 0) + (p.check?.slots.length ?? 0) > 0);
    this.allRows = parts.some((p) => p.rows === null && (p.check?.slots.length ?? 0) === 0);
    this.noCheck = parts.some((p) => p.check === null && (p.rows?.slots.length ?? 0) === 0);
    this.fields = verb === 'delete' || parts.length === 0 ? null : fields;
    const readable = this.fields;
    this.masked = verb !== 'read' || readable === null ? [] : entity.userFields.map((f) => f.name).filter((n) => !readable.has(n) && !ALWAYS_READABLE.has(n)).sort();
    const hidden = new Set(this.masked);
    const cols = ['id', ...entity.userFields.map((f) => f.name).filter((n) => !hidden.has(n)), 'createdAt', 'updatedAt', 'concurrencyToken'].map(quoteIdent);
    this.selectList = this.masked.length === 0 ? entity.selectList : cols.map((c) => `t.${c}`).join(', ');
    this.returningList = this.masked.length === 0 ? entity.returningList : cols.join(', ');
  }

  /**
   * Per caller (Actor objects are cached with their verified token, so one
   * per session per node): what does not change between its requests.
   */
  private readonly perActor = new WeakMap<Actor, ActorView>();

  private view(actor: Actor): ActorView {
    let v = this.perActor.get(actor);
    if (v === undefined) {
      const live = !this.hasActorRefs ? this.parts as GrantPart[] : this.parts.filter((p) => (p.rows === null || p.rows.resolves(actor)) && (p.check === null || p.check.resolves(actor)));
      v = { live, evaluated: UNSET, point: null };
      this.perActor.set(actor, v);
    }
    return v;
  }

  /** The covering grants whose `$actor` values all resolve for this caller. */
  live(actor: Actor): GrantPart[] {
    return this.view(actor).live;
  }

  /**
   * Read by id under this policy: the SQL text (with its statement name,
   * stable across callers whose live grants are the same) and the `$actor`
   * values after `$1` (the id). Built once per caller, then only looked up.
   */
  pointRead(actor: Actor): PointRead {
    const v = this.view(actor);
    if (v.point === null) {
      const params = new SqlParams();
      params.add(null);
      const rows = this.rowsSql(actor, 't', params);
      const e = this.entity;
      const sql = `SELECT ${this.selectList} FROM ${e.table} t WHERE t.id = $1${e.liveClause}${rows === null ? '' : ` AND ${rows}`}`;
      v.point = { sql, name: statementName(sql), values: params.values.slice(1), limited: rows !== null };
    }
    return v.point;
  }

  /** SQL limiting rows over `alias`; null when every row is covered; `FALSE` when no live grant remains. */
  rowsSql(actor: Actor, alias: string, params: SqlParams, depth = 0): string | null {
    if (this.allRows) return null;
    const live = this.live(actor);
    if (live.some((p) => p.rows === null)) return null;
    if (live.length === 0) return 'FALSE';
    const ors = live.map((p) => p.rows!.render(alias, depth, params, actor));
    return ors.length === 1 ? `(${ors[0]})` : `(${ors.join(' OR ')})`;
  }

  /** SQL the written row must satisfy over `alias`; null when no check applies. */
  checkSql(actor: Actor, alias: string, params: SqlParams): string | null {
    if (this.noCheck) return null;
    const live = this.live(actor);
    if (live.some((p) => p.check === null)) return null;
    if (live.length === 0) return 'FALSE';
    const ors = live.map((p) => p.check!.render(alias, 0, params, actor));
    return ors.length === 1 ? `(${ors[0]})` : `(${ors.join(' OR ')})`;
  }

  /** The row filter as JSON with `$actor` substituted; null when every row is covered. Computed once per caller. */
  evaluatedRows(actor: Actor): unknown {
    if (this.allRows) return null;
    const v = this.view(actor);
    if (v.evaluated === UNSET) {
      const live = v.live;
      if (live.some((p) => p.rows === null)) v.evaluated = null;
      else {
        const items = live.map((p) => p.rows!.evaluated(actor));
        v.evaluated = items.length === 1 ? items[0] : { or: items };
      }
    }
    return v.evaluated;
  }
}

/** Compiled policies kept per publication object; past the cap per publication the cache starts over. */
const MAX_SETS_PER_PUBLICATION = 1_000;
const cache = new WeakMap<CompiledPublication, Map<string, CompiledPolicy>>();

/**
 * A grant set's policy over one publication: VerbPolicies built on first
 * use, then shared by every request of every caller holding the same
 * grants. Never built per request.
 */
export class CompiledPolicy {
  /** Per entity, its four verb policies (read, insert, update, delete), built on first use. */
  private readonly verbs = new Map<CompiledEntity, Array<VerbPolicy | undefined>>();

  /** One request view per caller, reused by its requests (ctx.rowPolicy holds no per-request state). */
  readonly views = new WeakMap<Actor, unknown>();

  constructor(readonly publication: CompiledPublication, readonly set: GrantPolicySet) {}

  static for(publication: CompiledPublication, set: GrantPolicySet): CompiledPolicy {
    let bySet = cache.get(publication);
    if (bySet === undefined) cache.set(publication, (bySet = new Map()));
    let p = bySet.get(set.key);
    if (p === undefined) {
      if (bySet.size >= MAX_SETS_PER_PUBLICATION) bySet.clear();
      p = new CompiledPolicy(publication, set);
      bySet.set(set.key, p);
    }
    return p;
  }

  verb(entity: CompiledEntity, verb: PolicyVerb): VerbPolicy {
    let byVerb = this.verbs.get(entity);
    if (byVerb === undefined) this.verbs.set(entity, (byVerb = []));
    const i = VERB_INDEX[verb];
    let v = byVerb[i];
    if (v === undefined) byVerb[i] = v = new VerbPolicy(entity, this.set.grants, verb);
    return v;
  }
}
