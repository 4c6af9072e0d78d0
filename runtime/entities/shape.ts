import { requestFilterGrants } from '../filter/grants.js';
import { grantFor } from '../publication/operations.js';
import type { Relation } from '../publication/relations.js';
import type { CompiledEntity } from './compiled-entity.js';
import type { SortKey } from './list-params.js';

/**
 * What a caller wants read, as a tree: the columns of a row, the related
 * rows it reaches (a toOne row, a toMany page), and for a page its filter,
 * sort and window. Protocols that select fields (GraphQL today, gRPC field
 * masks and MCP later) describe their request as a shape; the executor
 * plans it into one SQL statement (shape-sql.ts) under the caller's policy.
 *
 * Keys are the caller's names for each part (GraphQL response keys, so two
 * aliases of one relation with other arguments stay apart).
 */
export interface RowShape {
  /** Response key → column (`id`, a user field, `createdAt`, `updatedAt`, `concurrencyToken`). */
  columns: Map<string, string>;
  /** Response key → the related row of a reference field. */
  toOne: Map<string, { relation: Relation; row: RowShape }>;
  /** Response key → a page of the rows that reference this one. */
  toMany: Map<string, { relation: Relation; page: PageShape }>;
}

/** One page of rows: which, in what order, and which parts of the page are wanted. */
export interface PageShape {
  /** The filter as the caller sent it (the REST filter object); parsed by the executor. */
  filter: unknown;
  sort: SortKey[];
  /** At most one of first/last; neither means `first` = the default page size. */
  first: number | null;
  last: number | null;
  after: string | null;
  before: string | null;
  /** The rows' shape; null when only counts or page info are asked. */
  row: RowShape | null;
  /** Each row's cursor, and the page's start/end cursors. */
  cursors: boolean;
  totalCount: boolean;
}

/** A page as read: rows keyed by the shape's keys, and what the page knows about its neighbours. */
export interface PageResult {
  rows: ShapedRow[];
  /** Parallel to `rows` when the shape asked for cursors. */
  cursors: string[] | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  totalCount: number | null;
}

/**
 * A row as read: values by response key; a toOne key holds a ShapedRow or
 * null, a toMany key a PageResult. Keys of columns masked from the caller
 * are absent and listed in `MASKED` (GraphQL answers them as null).
 */
export type ShapedRow = Record<string, unknown> & { [MASKED]?: ReadonlySet<string> };
export const MASKED: unique symbol = Symbol('masked');

export const emptyRowShape = (): RowShape => ({ columns: new Map([['id', 'id']]), toOne: new Map(), toMany: new Map() });

/**
 * Read grants a shaped read needs beyond the operation's own: every entity a
 * toOne or toMany part reaches and every entity a (nested) filter enters.
 */
export function shapeGrants(entity: CompiledEntity, row: RowShape | null, page: PageShape | null = null): string[] {
  const grants = new Set<string>();
  const visitPage = (e: CompiledEntity, p: PageShape): void => {
    if (p.filter !== null && p.filter !== undefined) for (const g of requestFilterGrants(e, { raw: p.filter })) grants.add(g);
    if (p.row !== null) visitRow(e, p.row);
  };
  const visitRow = (e: CompiledEntity, r: RowShape): void => {
    for (const { relation, row: sub } of r.toOne.values()) {
      grants.add(grantFor(relation.target, 'read'));
      visitRow(e.peer(relation.target), sub);
    }
    for (const { relation, page: sub } of r.toMany.values()) {
      grants.add(grantFor(relation.owner, 'read'));
      visitPage(e.peer(relation.owner), sub);
    }
  };
  if (page !== null) visitPage(entity, page);
  if (row !== null) visitRow(entity, row);
  return [...grants];
}
