import { validationFailed } from '../errors/service-error.js';
import type { FilterNode } from '../filter/ast.js';
import { requestFilterGrants } from '../filter/grants.js';
import { parseFilterText } from '../filter/parse.js';
import type { Relation } from '../publication/relations.js';
import type { CompiledEntity } from './compiled-entity.js';
import { includeGrants, parseInclude } from './include.js';
import { parseFieldsParam } from './row-output.js';
import { decodeCursor, type CursorState } from './cursor.js';
import type { EntityArgs } from './entity-args.js';

export interface SortKey {
  field: string;
  desc: boolean;
}

export interface ListParams {
  filter: FilterNode | null;
  /** Text identity of filter + sort: a cursor is only valid for the same one. */
  shapeKey: string;
  sort: SortKey[];
  fields: string[] | null;
  include: Relation[];
  page: number;
  pageSize: number;
  cursor: CursorState | null;
  includeTotal: boolean;
}

const MAX_SORT_KEYS = 8;
const MAX_PAGE = 1_000_000;
const UNSORTABLE = new Set(['JSON']);

function positiveInt(name: string, text: string | undefined, fallback: number, max: number, reason: string): number {
  if (text === undefined || text === '') return fallback;
  if (!/^\d{1,9}$/.test(text)) throw validationFailed(`Query.Invalid${name[0]!.toUpperCase()}${name.slice(1)}`, `${name} must be a positive integer`, name);
  const n = Number(text);
  if (n < 1) throw validationFailed(`Query.Invalid${name[0]!.toUpperCase()}${name.slice(1)}`, `${name} must be at least 1`, name);
  if (n > max) throw validationFailed(reason, `${name} must be at most ${max}`, name);
  return n;
}

function parseSort(entity: CompiledEntity, text: string | undefined): SortKey[] {
  if (text === undefined || text === '') return [{ field: 'createdAt', desc: false }];
  const keys = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (keys.length > MAX_SORT_KEYS) throw validationFailed('Query.TooManySortKeys', `at most ${MAX_SORT_KEYS} sort keys`, 'sort');
  const seen = new Set<string>();
  const out: SortKey[] = [];
  for (const k of keys) {
    const desc = k.startsWith('-');
    const field = desc || k.startsWith('+') ? k.slice(1) : k;
    const f = entity.queryableFields.get(field);
    if (f === undefined) throw validationFailed('Query.UnknownSortField', `unknown sort field '${field}'`, 'sort');
    if (UNSORTABLE.has(f.type)) throw validationFailed('Query.UnsortableField', `cannot sort by JSON field '${field}'`, 'sort');
    if (seen.has(field)) continue;
    seen.add(field);
    if (field === 'id') continue; // id is always the final tie-breaker
    out.push({ field, desc });
  }
  return out;
}

/**
 * Read grants a list query needs beyond the operation's own (stage 4): the
 * related entities its filter reaches and, unless `filterOnly` (count), the
 * relations it includes. Sort and `fields` name only the entity's own
 * columns (parseSort, parseFieldsParam), so they reach no other entity.
 */
export function listGrants(entity: CompiledEntity, args: EntityArgs, filterOnly = false): string[] {
  const text = args.filter;
  const grants = requestFilterGrants(entity, text === undefined || text === '' ? null : { text });
  return filterOnly ? grants : [...grants, ...includeGrants(entity, args.include)];
}

/** What bounds a page: the node's limit and the project's governance envelope (an operation context has both). */
export interface PageSizeBounds {
  readonly services: { readonly limits: { readonly maxPageSize: number } };
  readonly envelope: { readonly maxPageSize: number | null } | null;
}

/** The largest page a list may ask for: the platform limit, lowered by the project's governance envelope (set by stage 3). */
export const maxPageSizeFor = (ctx: PageSizeBounds): number => Math.min(ctx.services.limits.maxPageSize, ctx.envelope?.maxPageSize ?? Infinity);

/** Validates every list parameter up front; nothing reaches SQL unchecked. */
export function parseListParams(entity: CompiledEntity, args: EntityArgs, maxPageSize: number): ListParams {
  const filterText = args.filter;
  const filter = filterText === undefined || filterText === '' ? null : parseFilterText(filterText, entity);
  const sort = parseSort(entity, args.sort);
  const shapeKey = `${entity.entityName}|${filterText ?? ''}|${sort.map((s) => (s.desc ? '-' : '') + s.field).join(',')}`;
  const pageSize = positiveInt('pageSize', args.pageSize, 50 > maxPageSize ? maxPageSize : 50, maxPageSize, 'Query.PageSizeTooLarge');
  const page = positiveInt('page', args.page, 1, MAX_PAGE, 'Query.PageTooLarge');
  const cursorText = args.cursor;
  const cursor = cursorText === undefined || cursorText === '' ? null : decodeCursor(cursorText, shapeKey, [...sort.map((k) => entity.queryableFields.get(k.field)!), entity.queryableFields.get('id')!]);
  const total = args.includeTotal;
  if (total !== undefined && total !== 'true' && total !== 'false') throw validationFailed('Query.InvalidIncludeTotal', 'includeTotal must be true or false', 'includeTotal');
  return {
    filter, shapeKey, sort,
    fields: parseFieldsParam(entity, args.fields),
    include: parseInclude(entity, args.include),
    page: cursor === null ? page : cursor.page,
    pageSize, cursor,
    includeTotal: total === 'true',
  };
}
