import { ServiceError, notFound } from '../../errors/service-error.js';
import { refuseDirectSchemaChange } from '../../branches/protection.js';
import { readHead } from '../../control/schema-change.js';
import type { ChangeInput } from '../../control/schema-migration.js';
import { storeBundle } from '../../authored/bundles.js';
import { compileHandler, type SourceReader } from '../../authored/compile.js';
import { isHandlerName, parseDeclaration } from '../../authored/declaration.js';
import { findHandler, handlersOf, publicHandler } from '../../authored/handler-plan.js';
import type { HandlerDef } from '../../authored/types.js';
import { fileByPath } from '../../source-assets/files.js';
import { readBlob } from '../../source-assets/blobs.js';
import type { ProjectModel } from '../../publication/model.js';
import { control, noContent } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { HANDLER_SCHEMAS as HS } from './handler-schemas.js';
import { SCHEMA_TAG, schemaOp } from './schema-op.js';

const PUBLISHES = 'Compiles the source (esbuild; relative imports of the branch\'s source assets are bundled) and publishes: one new `publicationVersion`, one schema journal entry. 422 `Handler.CompileFailed` (with `error.details: { path, line, column, message }`) or `Handler.ImportNotAllowed` publish nothing. On a branch with `requireProposal`: 403 `Branch.ProposalRequired`.';
const REASONS = {
  prefix: 'Handler',
  fields: {
    name: 'Handler.InvalidName', surface: 'Handler.InvalidSurface', source: 'Handler.InvalidSource', export: 'Handler.InvalidExport',
    grants: 'Handler.InvalidGrants', limits: 'Handler.InvalidLimits', operation: 'Handler.InvalidOperation', workflow: 'Handler.InvalidWorkflow',
  },
};
const BY_NAME = { name: { description: 'Handler name.' } };
const WRITE_WITH_CONFLICT = [400, 401, 403, 404, 409, 413, 422];

const op = (id: string, contract: Parameters<typeof schemaOp>[2], execute: Parameters<typeof schemaOp>[3]): DeclaredSpec => schemaOp(SCHEMA_TAG, id, contract, execute);

const recordOf = (h: HandlerDef, publicationVersion: number): Record<string, unknown> => ({ ...publicHandler(h), publicationVersion });

/** The branch's source assets as the compiler reads them: null for a path with no file. */
function sourceReader(ctx: OperationContext): SourceReader {
  const db = ctx.services.db;
  const scope = { projectId: ctx.scope!.project.id, branch: ctx.scope!.branch };
  return async (path) => {
    try {
      const file = await fileByPath(db, scope, path);
      return await readBlob(db, scope.projectId, file.sha256);
    } catch (err) {
      if (ServiceError.is(err) && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  };
}

/** A name from the path: an impossible one is simply not there. */
function nameOf(ctx: OperationContext): string {
  const name = ctx.inv.params.name ?? '';
  if (!isHandlerName(name)) throw notFound('Handler.NotFound', `handler '${String(name).slice(0, 64)}' does not exist`);
  return name;
}

async function headModel(ctx: OperationContext): Promise<ProjectModel> {
  return (await readHead(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, false)).model;
}

/** Runs one handler change through the Project actor (the single writer of the branch's publications). */
async function publish(ctx: OperationContext, change: ChangeInput): Promise<number> {
  const scope = ctx.scope!;
  const res = await ctx.services.control.schemaCommand(scope.project.id, {
    kind: 'migrate',
    migration: { branch: scope.branch, kind: 'single', changes: [change], actor: ctx.actor.label, correlationId: ctx.inv.correlationId },
  });
  if (res.kind !== 'migrated') throw new Error('unexpected schema command result');
  return res.result.publication.version;
}

/**
 * Declare (`POST`) or re-declare (`PUT`): checks the body, compiles the source as the branch
 * has it now, stores the bundle, then publishes the pinned definition. Name clashes are
 * checked on the head first (no compile for a body that cannot publish) and again by the
 * actor on the locked head (authoritative).
 */
async function declare(ctx: OperationContext, pathName: string | undefined): Promise<Record<string, unknown>> {
  const scope = ctx.scope!;
  const db = ctx.services.db;
  await refuseDirectSchemaChange(db, scope.project.id, scope.branch);
  const envelope = (await ctx.services.governance?.effective(scope.project.id))?.effective ?? null;
  const decl = parseDeclaration(ctx.inv.body, envelope, pathName);
  const exists = findHandler(await headModel(ctx), decl.name) !== undefined;
  if (pathName === undefined && exists) throw new ServiceError('CONFLICT', 'Handler.Exists', `handler '${decl.name}' already exists`, { field: 'name' });
  if (pathName !== undefined && !exists) throw notFound('Handler.NotFound', `handler '${decl.name}' does not exist`);
  const compiled = await compileHandler(decl.source, decl.export, sourceReader(ctx));
  const bundleSha256 = await storeBundle(db, scope.project.id, compiled.code);
  const def: HandlerDef = { ...decl, sha256: compiled.sourceSha256, bundleSha256 };
  const version = await publish(ctx, { action: pathName === undefined ? 'addHandler' : 'alterHandler', body: def });
  return recordOf(def, version);
}

/** `/api/Schema/handlers…` (CONTRACT "Authored code" → "Handlers"). */
export const HANDLER_SPECS = {
  create: op('Schema.Handlers.Create', {
    summary: 'Declare a handler: compile its source and publish it', description: PUBLISHES,
    routes: [{ method: 'POST', path: 'Schema/handlers' }], body: HS.ControlHandlerInput, reasons: REASONS,
    output: { status: 201, body: HS.ControlHandlerSingle }, errors: WRITE_WITH_CONFLICT,
  }, async (ctx) => control(ctx, 'Handler', 'created', await declare(ctx, undefined), 201)),
  list: op('Schema.Handlers.List', {
    summary: 'The handlers of the serving publication, by name', routes: [{ method: 'GET', path: 'Schema/handlers' }],
    output: { status: 200, body: HS.ControlHandlerList },
  }, async (ctx) => {
    const pub = ctx.scope!.publication;
    return control(ctx, 'Handler', 'listed', handlersOf(pub.record.model).map((h) => recordOf(h, pub.version)));
  }),
  read: op('Schema.Handlers.Read', {
    summary: 'One handler of the serving publication', routes: [{ method: 'GET', path: 'Schema/handlers/:name' }], params: BY_NAME,
    output: { status: 200, body: HS.ControlHandlerSingle },
  }, async (ctx) => {
    const pub = ctx.scope!.publication;
    const h = findHandler(pub.record.model, nameOf(ctx));
    if (h === undefined) throw notFound('Handler.NotFound', `handler '${nameOf(ctx)}' does not exist`);
    return control(ctx, 'Handler', 'read', recordOf(h, pub.version));
  }),
  update: op('Schema.Handlers.Update', {
    summary: 'Re-declare a handler: re-read and re-pin its source, publish', description: `${PUBLISHES} Editing a source asset alone changes nothing served; this does.`,
    routes: [{ method: 'PUT', path: 'Schema/handlers/:name' }], params: BY_NAME, body: HS.ControlHandlerPutInput, reasons: REASONS,
    output: { status: 200, body: HS.ControlHandlerSingle }, errors: WRITE_WITH_CONFLICT,
  }, async (ctx) => control(ctx, 'Handler', 'updated', await declare(ctx, nameOf(ctx)))),
  delete: op('Schema.Handlers.Delete', {
    summary: 'Drop a handler: a new publication without it', description: 'One new `publicationVersion`, one schema journal entry. On a branch with `requireProposal`: 403 `Branch.ProposalRequired`.',
    routes: [{ method: 'DELETE', path: 'Schema/handlers/:name' }], params: BY_NAME,
    output: { status: 204 }, errors: [400, 401, 403, 404, 409, 422],
  }, async (ctx) => {
    const name = nameOf(ctx);
    await publish(ctx, { action: 'dropHandler', body: { name } });
    return noContent;
  }),
};
