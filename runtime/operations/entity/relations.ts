import { quoteIdent } from '../../../storage/index.js';
import { notFound, validationFailed, type ServiceError } from '../../errors/service-error.js';
import type { CompiledEntity } from '../../entities/compiled-entity.js';
import { isUuid } from '../../entities/field-values.js';
import { listGrants, maxPageSizeFor, parseListParams } from '../../entities/list-params.js';
import type { Relation } from '../../publication/relations.js';
import { noContent, single } from '../envelopes.js';
import type { OperationContext } from '../types.js';
import { updateRow } from './insert.js';
import { SqlParams } from '../../filter/to-sql.js';
import { deniedByPolicy } from '../../policy/grant-policy.js';
import { runList } from './list.js';
import { explainMissedWrite, requireRowId, rowNotFound } from './row-lookup.js';
import { entitySpec } from './spec.js';
import { argsOf } from './args.js';

const relationOf = (ctx: OperationContext): Relation => ctx.entity!.relations.get(ctx.entityOperation!.relation!)!;

async function requireParent(ctx: OperationContext): Promise<{ id: string; row: Record<string, unknown> }> {
  const entity = ctx.entity!;
  const id = requireRowId(entity, ctx.inv.params.id);
  const params = new SqlParams();
  params.add(id);
  // Under a row policy the parent must be readable too (403 otherwise, as GET /{entity}/{id}).
  const rows = ctx.rowPolicy?.rowsSql(entity, 'read', 't', params) ?? null;
  const covered = rows === null ? '' : `, (${rows}) IS TRUE AS "covered__"`;
  const res = await ctx.services.db.query<Record<string, unknown>>(`SELECT ${entity.selectList}${covered} FROM ${entity.table} t WHERE t.id = $1${entity.liveClause}`, params.values);
  const row = res.rows[0];
  if (row === undefined) throw rowNotFound(entity);
  if (rows !== null && row.covered__ !== true) throw deniedByPolicy(`no grant covers this ${entity.entityName}`);
  return { id, row };
}

/** GET /{entity}/{id}/{relation}: the related row (toOne) or a page of related rows (toMany). */
export const relationListOp = entitySpec('RelationList', async (ctx) => {
  const r = relationOf(ctx);
  const parent = await requireParent(ctx);
  if (r.kind === 'toOne') {
    const target = ctx.entity!.peer(r.target);
    const fk = parent.row[r.field];
    const policy = ctx.rowPolicy;
    // A masked reference field is not followed; a related row the caller may not read answers null.
    if (typeof fk !== 'string' || (policy !== null && policy.read(ctx.entity!).masked.includes(r.field))) return single(ctx, null);
    const params = new SqlParams();
    params.add(fk);
    const allowed = policy?.rowsSql(target, 'read', 't', params) ?? null;
    const select = policy === null ? target.selectList : policy.read(target).selectList;
    const res = await ctx.services.db.query(`SELECT ${select} FROM ${target.table} t WHERE t.id = $1${target.liveClause}${allowed === null ? '' : ` AND ${allowed}`}`, params.values);
    return single(ctx, res.rows[0] ?? null);
  }
  const owner = ctx.entity!.peer(r.owner);
  // Listing the rows whose reference points at this parent is a filter on that reference: refused when it is masked (no oracle).
  if (ctx.rowPolicy !== null && ctx.rowPolicy.read(owner).masked.includes(r.field)) throw deniedByPolicy(`field '${r.field}' is not readable`, r.field);
  const params = parseListParams(owner, argsOf(ctx), maxPageSizeFor(ctx));
  return runList(ctx, owner, params, (sql) => [`t.${quoteIdent(r.field)} = ${sql.add(parent.id)}::uuid`]);
}, (ctx) => {
  // A toMany page takes the list parameters of the owner entity: its filter and include need their grants too.
  const r = relationOf(ctx);
  return r.kind === 'toMany' ? listGrants(ctx.entity!.peer(r.owner), argsOf(ctx)) : [];
});

function relatedIdFromBody(ctx: OperationContext): string {
  const body = ctx.inv.body as Record<string, unknown> | null;
  const v = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.relatedId : undefined;
  if (!isUuid(v)) throw validationFailed('Relation.InvalidRelatedId', 'body must be { "relatedId": "<uuid>" }', 'relatedId');
  return v.toLowerCase();
}

/** Writes the foreign key on the row that owns it; returns that row. */
async function setLink(ctx: OperationContext, owner: CompiledEntity, ownerId: string, field: string, value: string | null, match: string | null): Promise<Record<string, unknown> | null> {
  const f = owner.userFieldByName.get(field)!;
  return updateRow(ctx.services.db, ctx, owner, ownerId, { fields: [f], values: [value] }, null, match === null ? null : { field, value: match });
}

/** A link write that matched no row: 404, or 403 when the row exists but no update grant covers it. */
async function missedLink(ctx: OperationContext, owner: CompiledEntity, id: string): Promise<ServiceError> {
  return ctx.rowPolicy === null ? rowNotFound(owner) : explainMissedWrite(ctx.services.db, owner, id, ctx.rowPolicy);
}

/** POST /{entity}/{id}/{relation} { relatedId }: links the rows; 201 with the row whose foreign key changed. */
export const relationAttachOp = entitySpec('RelationAttach', async (ctx) => {
  const r = relationOf(ctx);
  const relatedId = relatedIdFromBody(ctx);
  const parent = await requireParent(ctx);
  let row: Record<string, unknown> | null;
  if (r.kind === 'toOne') {
    row = await setLink(ctx, ctx.entity!, parent.id, r.field, relatedId, null);
    if (row === null) throw await missedLink(ctx, ctx.entity!, parent.id);
  } else {
    const owner = ctx.entity!.peer(r.owner);
    row = await setLink(ctx, owner, relatedId, r.field, parent.id, null);
    if (row === null) throw await missedLink(ctx, owner, relatedId);
  }
  ctx.services.outbox.kick();
  return single(ctx, row, 201);
});

/** DELETE /{entity}/{id}/{relation}/{relatedId}: clears the foreign key (it must be nullable). */
export const relationDetachOp = entitySpec('RelationDetach', async (ctx) => {
  const r = relationOf(ctx);
  const parent = await requireParent(ctx);
  const owner = r.kind === 'toOne' ? ctx.entity! : ctx.entity!.peer(r.owner);
  if (!r.nullable) {
    throw validationFailed(`${owner.entityName}Validation.RelationRequired`, `'${r.field}' is required and cannot be detached; attach another row instead`, r.field);
  }
  const relatedId = ctx.inv.params.relatedId;
  if (relatedId === undefined || !isUuid(relatedId)) throw notFound('Relation.NotLinked', 'the rows are not linked');
  const row = r.kind === 'toOne'
    ? await setLink(ctx, owner, parent.id, r.field, null, relatedId.toLowerCase())
    : await setLink(ctx, owner, relatedId.toLowerCase(), r.field, null, parent.id);
  if (row === null) throw notFound('Relation.NotLinked', 'the rows are not linked');
  ctx.services.outbox.kick();
  return noContent;
});
