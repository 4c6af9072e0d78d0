import { validationFailed, type ServiceError } from '../errors/service-error.js';
import { FILTER_LIMITS } from './ast.js';

/**
 * The event filter for consumers (realtime, webhooks, subscriptions): the
 * same bounded and/or/not tree as the entity filter, but leaves select a
 * value in the event envelope by a dotted JSON path (`$.type`,
 * `$.data.status`) and are evaluated in memory.
 *
 * Wire shape (a leaf): `{ "path": "$.type", "op": "startsWith", "value": "entity." }`;
 * combinators: `{ "and": [ … ] }`, `{ "or": [ … ] }`, `{ "not": { … } }`.
 */
export const EVENT_FILTER_OPS = ['eq', 'ne', 'in', 'startsWith', 'endsWith', 'gt', 'lt', 'isNull'] as const;
export type EventFilterOp = (typeof EVENT_FILTER_OPS)[number];

export type EventFilterNode =
  | { kind: 'and'; items: EventFilterNode[] }
  | { kind: 'or'; items: EventFilterNode[] }
  | { kind: 'not'; item: EventFilterNode }
  | { kind: 'cmp'; path: readonly string[]; op: EventFilterOp; value: unknown };

const PATH = /^\$(\.[A-Za-z_][A-Za-z0-9_]*){1,16}$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

class EventFilterParser {
  private nodes = 0;

  fail(at: string, message: string, reason = 'InvalidFilter'): ServiceError {
    return validationFailed(`Filter.${reason}`, message, at === '' ? 'filter' : `filter.${at}`);
  }

  node(raw: unknown, at: string, depth: number): EventFilterNode {
    if (depth > FILTER_LIMITS.maxDepth) throw this.fail(at, `filter nesting deeper than ${FILTER_LIMITS.maxDepth}`, 'TooDeep');
    if (++this.nodes > FILTER_LIMITS.maxNodes) throw this.fail(at, `filter has more than ${FILTER_LIMITS.maxNodes} nodes`, 'TooLarge');
    if (!isObject(raw)) throw this.fail(at, 'filter must be a JSON object');
    const keys = Object.keys(raw);
    const join = (k: string): string => (at === '' ? k : `${at}.${k}`);
    if (keys.length === 1 && (keys[0] === 'and' || keys[0] === 'or')) {
      const k = keys[0];
      const v = raw[k];
      if (!Array.isArray(v) || v.length === 0) throw this.fail(join(k), `'${k}' takes a non-empty array of filters`);
      return { kind: k, items: v.map((x, i) => this.node(x, `${join(k)}[${i}]`, depth + 1)) };
    }
    if (keys.length === 1 && keys[0] === 'not') return { kind: 'not', item: this.node(raw.not, join('not'), depth + 1) };
    for (const k of keys) if (k !== 'path' && k !== 'op' && k !== 'value') throw this.fail(join(k), `unknown filter key '${k}'`, 'UnknownField');
    const { path, op, value } = raw;
    if (typeof path !== 'string' || !PATH.test(path)) throw this.fail(join('path'), "'path' must be a dotted JSON path such as $.type or $.data.status", 'InvalidPath');
    if (typeof op !== 'string' || !(EVENT_FILTER_OPS as readonly string[]).includes(op)) throw this.fail(join('op'), `unknown operator '${String(op)}'`, 'UnknownOperator');
    const vAt = join('value');
    switch (op as EventFilterOp) {
      case 'isNull':
        if (typeof value !== 'boolean') throw this.fail(vAt, 'isNull takes true or false', 'InvalidValue');
        break;
      case 'eq':
      case 'ne':
        if (!isScalar(value)) throw this.fail(vAt, `'${op}' takes a string, number, boolean or null`, 'InvalidValue');
        break;
      case 'in':
        if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.maxInValues || !value.every(isScalar)) {
          throw this.fail(vAt, `'in' takes a non-empty array of at most ${FILTER_LIMITS.maxInValues} scalars`, 'InvalidValue');
        }
        break;
      case 'startsWith':
      case 'endsWith':
        if (typeof value !== 'string' || value.length > FILTER_LIMITS.maxLikeLength) throw this.fail(vAt, `'${op}' takes a string of at most ${FILTER_LIMITS.maxLikeLength} characters`, 'InvalidValue');
        break;
      case 'gt':
      case 'lt':
        if (typeof value !== 'number' && typeof value !== 'string') throw this.fail(vAt, `'${op}' takes a number or a string`, 'InvalidValue');
        break;
    }
    return { kind: 'cmp', path: path.split('.').slice(1), op: op as EventFilterOp, value };
  }
}

/** Parses a decoded event filter; 422 VALIDATION_FAILED naming the offending field (`filter.and[1].op`). */
export function parseEventFilterAst(raw: unknown): EventFilterNode {
  return new EventFilterParser().node(raw, '', 1);
}

function select(event: unknown, path: readonly string[]): unknown {
  let cur: unknown = event;
  for (const seg of path) {
    if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** Numbers compare numerically, strings lexically (ISO timestamps order correctly); mixed types never match. */
function compare(a: unknown, b: unknown): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

/** Evaluates a parsed event filter against an event envelope (or any JSON value). A missing path is null. */
export function evaluateEventFilter(node: EventFilterNode, event: unknown): boolean {
  switch (node.kind) {
    case 'and':
      return node.items.every((n) => evaluateEventFilter(n, event));
    case 'or':
      return node.items.some((n) => evaluateEventFilter(n, event));
    case 'not':
      return !evaluateEventFilter(node.item, event);
    case 'cmp': {
      const v = select(event, node.path);
      switch (node.op) {
        case 'isNull':
          return (v === undefined || v === null) === node.value;
        case 'eq':
          return v === node.value || (node.value === null && v === undefined);
        case 'ne':
          return !(v === node.value || (node.value === null && v === undefined));
        case 'in':
          return (node.value as unknown[]).some((x) => x === v);
        case 'startsWith':
          return typeof v === 'string' && v.startsWith(node.value as string);
        case 'endsWith':
          return typeof v === 'string' && v.endsWith(node.value as string);
        case 'gt': {
          const c = compare(v, node.value);
          return c !== null && c > 0;
        }
        case 'lt': {
          const c = compare(v, node.value);
          return c !== null && c < 0;
        }
      }
    }
  }
}
