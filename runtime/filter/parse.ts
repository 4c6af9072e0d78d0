import { validationFailed, type ServiceError } from '../errors/service-error.js';
import { checkFieldValue } from '../entities/field-values.js';
import type { FieldDef } from '../publication/model.js';
import { actorRefOf, isActorRefShape } from '../policy/actor-ref.js';
import { COMPARISON_OPS, FILTER_LIMITS, type ComparisonOp, type FilterNode } from './ast.js';

/** What the parser needs to know about an entity's filterable fields. */
export interface FilterableEntity {
  entityName: string;
  field(name: string): FieldDef | undefined;
  /** The related entity's description, for reference fields. */
  related(name: string): FilterableEntity | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ORDERED: ReadonlySet<string> = new Set(['Int', 'Decimal', 'DateTime', 'Instant', 'String', 'ID', 'Enum']);
const LIKE_TYPES: ReadonlySet<string> = new Set(['String', 'ID', 'Enum']);

class Parser {
  private nodes = 0;

  /**
   * `reached` collects every related entity the filter enters, as soon as it enters it (see filter/grants.ts).
   * `actorRefs`: values may be `{ "$actor": … }` (grant row filters and checks only, never a request's filter).
   */
  constructor(private readonly reached: Set<string> | undefined, private readonly actorRefs = false) {}

  fail(path: string, message: string, reason = 'InvalidFilter'): ServiceError {
    return validationFailed(`Filter.${reason}`, message, path === '' ? 'filter' : `filter.${path}`);
  }

  object(raw: unknown, entity: FilterableEntity, path: string, depth: number): FilterNode {
    if (depth > FILTER_LIMITS.maxDepth) throw this.fail(path, `filter nesting deeper than ${FILTER_LIMITS.maxDepth}`, 'TooDeep');
    if (!isObject(raw)) throw this.fail(path, 'filter must be a JSON object');
    const items: FilterNode[] = [];
    for (const [key, value] of Object.entries(raw)) {
      if (++this.nodes > FILTER_LIMITS.maxNodes) throw this.fail(path, `filter has more than ${FILTER_LIMITS.maxNodes} nodes`, 'TooLarge');
      const at = path === '' ? key : `${path}.${key}`;
      if (key === 'and' || key === 'or') {
        if (!Array.isArray(value) || value.length === 0) throw this.fail(at, `'${key}' takes a non-empty array of filters`);
        items.push({ kind: key, items: value.map((v, i) => this.object(v, entity, `${at}[${i}]`, depth + 1)) });
      } else if (key === 'not') {
        items.push({ kind: 'not', item: this.object(value, entity, at, depth + 1) });
      } else {
        items.push(this.field(key, value, entity, at, depth));
      }
    }
    if (items.length === 1) return items[0]!;
    return { kind: 'and', items };
  }

  field(name: string, raw: unknown, entity: FilterableEntity, at: string, depth: number): FilterNode {
    const f = entity.field(name);
    if (f === undefined) throw this.fail(at, `unknown field '${name}' on ${entity.entityName}`, 'UnknownField');
    if (!isObject(raw)) throw this.fail(at, `field '${name}' takes an operator object such as { "eq": … }`);
    const related = f.references !== null ? entity.related(name) : undefined;
    const ops = Object.keys(raw);
    // A reference field either compares its own id value or nests a filter on the related entity.
    if (related !== undefined && ops.length > 0 && ops.every((k) => !(COMPARISON_OPS as readonly string[]).includes(k))) {
      this.reached?.add(related.entityName);
      return { kind: 'related', field: name, entity: related.entityName, item: this.object(raw, related, at, depth + 1) };
    }
    if (ops.length === 0) throw this.fail(at, `field '${name}' needs an operator`);
    const items = ops.map((op) => this.comparison(f, op, raw[op], `${at}.${op}`));
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  }

  comparison(f: FieldDef, op: string, value: unknown, at: string): FilterNode {
    if (!(COMPARISON_OPS as readonly string[]).includes(op)) throw this.fail(at, `unknown operator '${op}'`, 'UnknownOperator');
    const check = (v: unknown, where: string): unknown => {
      if (this.actorRefs && isActorRefShape(v)) {
        const ref = actorRefOf(v);
        if (ref === null) throw this.fail(`${where}.$actor`, "'$actor' takes 'subjectId' or 'claims.<name>'", 'InvalidActorSource');
        return ref;
      }
      const problem = checkFieldValue(f, v);
      if (problem !== null) throw this.fail(where, `value for '${f.name}' ${problem}`, 'InvalidValue');
      return v;
    };
    let out = value;
    switch (op as ComparisonOp) {
      case 'isNull':
        if (typeof value !== 'boolean') throw this.fail(at, 'isNull takes true or false', 'InvalidValue');
        break;
      case 'eq':
      case 'ne':
        if (f.type === 'JSON') throw this.fail(at, `'${op}' is not supported on JSON fields`, 'UnsupportedOperator');
        out = check(value, at);
        break;
      case 'gt':
      case 'lt':
        if (!ORDERED.has(f.type)) throw this.fail(at, `'${op}' needs an ordered field`, 'UnsupportedOperator');
        out = check(value, at);
        break;
      case 'between':
        if (!ORDERED.has(f.type)) throw this.fail(at, `'between' needs an ordered field`, 'UnsupportedOperator');
        if (!Array.isArray(value) || value.length !== 2) throw this.fail(at, "'between' takes [low, high]", 'InvalidValue');
        out = value.map((v, i) => check(v, `${at}[${i}]`));
        break;
      case 'in':
        if (f.type === 'JSON') throw this.fail(at, `'in' is not supported on JSON fields`, 'UnsupportedOperator');
        if (!Array.isArray(value) || value.length === 0) throw this.fail(at, "'in' takes a non-empty array", 'InvalidValue');
        if (value.length > FILTER_LIMITS.maxInValues) throw this.fail(at, `'in' takes at most ${FILTER_LIMITS.maxInValues} values`, 'TooLarge');
        out = value.map((v, i) => check(v, `${at}[${i}]`));
        break;
      case 'like':
        // `id` and reference fields are uuid columns: PostgreSQL has no LIKE for them.
        if (!LIKE_TYPES.has(f.type) || f.references !== null) throw this.fail(at, `'like' needs a String, ID or Enum field`, 'UnsupportedOperator');
        // A trailing unpaired backslash is an unfinished escape PostgreSQL refuses at match time.
        if (typeof value !== 'string' || value.length > FILTER_LIMITS.maxLikeLength || value.includes('\u0000') || /(^|[^\\])(\\\\)*\\$/.test(value)) {
          throw this.fail(at, `'like' takes a pattern string of at most ${FILTER_LIMITS.maxLikeLength} characters`, 'InvalidValue');
        }
        break;
    }
    return { kind: 'cmp', field: f.name, op: op as ComparisonOp, value: out };
  }
}

/**
 * Parses filter JSON (already decoded) against an entity. Throws 422 with the
 * offending path. `reached`, when given, receives the related entities the
 * filter entered, even when parsing fails further on.
 */
export function parseFilter(raw: unknown, entity: FilterableEntity, reached?: Set<string>): FilterNode {
  return new Parser(reached).object(raw, entity, '', 1);
}

/** Parses a grant's rowFilter or check: the same shape, and values may be `{ "$actor": … }` (policy/actor-ref.ts). */
export function parsePolicyFilter(raw: unknown, entity: FilterableEntity): FilterNode {
  return new Parser(undefined, true).object(raw, entity, '', 1);
}

/** Decodes filter text from a query string, then parses it. */
export function parseFilterText(text: string, entity: FilterableEntity, reached?: Set<string>): FilterNode {
  if (Buffer.byteLength(text) > FILTER_LIMITS.maxTextBytes) {
    throw validationFailed('Filter.TooLarge', `filter text longer than ${FILTER_LIMITS.maxTextBytes} bytes`, 'filter');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw validationFailed('Filter.MalformedJson', 'filter is not valid JSON', 'filter');
  }
  return parseFilter(raw, entity, reached);
}
