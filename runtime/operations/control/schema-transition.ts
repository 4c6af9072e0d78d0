import { readHead } from '../../control/schema-change.js';
import type { SchemaCommand } from '../../control/schema-commands.js';
import { listTransitions, readTransition, transitionRecord } from '../../control/schema-transitions.js';
import { TRANSITION_PHASES, parseTransition } from '../../control/transition-plan.js';
import { control } from '../envelopes.js';
import type { DeclaredSpec, OperationContext } from '../types.js';
import { SCHEMA_TRANSITION_SCHEMAS as TS } from './schema-journal-schemas.js';
import { SCHEMA_TRANSITIONS_TAG, STATE_ERRORS, schemaOp } from './schema-op.js';

/** `/api/SchemaTransition` (CONTRACT "Schema transitions"): project-scoped, the platform admin's. */
const op = (id: string, contract: Parameters<typeof schemaOp>[2], execute: Parameters<typeof schemaOp>[3]): DeclaredSpec => schemaOp(SCHEMA_TRANSITIONS_TAG, id, contract, execute);

/**
 * Reason codes of the transition bodies' 422s that ajv answers (a non-object body, `kind`, the type of
 * `entityName`), as runtime/control/transition-plan.ts answered them; it still checks the rest.
 */
const TRANSITION_REASONS = { prefix: 'SchemaTransition', fields: { kind: 'SchemaTransition.UnknownKind', entityName: 'SchemaTransition.InvalidBody' } };
const BY_ID = { id: { description: 'Schema transition id.' } };

async function command(ctx: OperationContext, kind: 'transitionExecute' | 'transitionRollback'): Promise<Record<string, unknown>> {
  const scope = ctx.scope!;
  const cmd: SchemaCommand = { kind, transitionId: ctx.inv.params.id ?? '', branch: scope.branch, actor: ctx.actor.label, correlationId: ctx.inv.correlationId };
  const res = await ctx.services.control.schemaCommand(scope.project.id, cmd);
  if (res.kind !== 'transition') throw new Error('unexpected schema command result');
  return res.outcome.record;
}

export const SCHEMA_TRANSITION_SPECS = {
  list: op('SchemaTransition.List', {
    summary: 'Schema transitions of the branch', routes: [{ method: 'GET', path: 'SchemaTransition' }], output: { status: 200, body: TS.ControlTransitionList },
  }, async (ctx) => control(ctx, 'SchemaTransition', 'listed', await listTransitions(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch))),
  read: op('SchemaTransition.Read', {
    summary: 'A transition with its state and phase', routes: [{ method: 'GET', path: 'SchemaTransition/:id' }], params: BY_ID,
    output: { status: 200, body: TS.ControlTransitionSingle },
  }, async (ctx) => {
    const t = await readTransition(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, ctx.inv.params.id ?? '');
    return control(ctx, 'SchemaTransition', 'read', transitionRecord(t));
  }),
  preview: op('SchemaTransition.Preview', {
    summary: 'The phases a transition would run (applies nothing)', routes: [{ method: 'POST', path: 'SchemaTransition/preview' }],
    body: TS.ControlTransitionInput, reasons: TRANSITION_REASONS, output: { status: 200, body: TS.ControlTransitionPreview },
  }, async (ctx) => {
    const head = await readHead(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, false);
    const spec = parseTransition(ctx.inv.body, head.model);
    return control(ctx, 'SchemaTransition', 'previewed', { kind: spec.kind, entityName: spec.entityName, phases: [...TRANSITION_PHASES] });
  }),
  create: op('SchemaTransition.Create', {
    summary: 'Register an online transition (`pending`)', routes: [{ method: 'POST', path: 'SchemaTransition' }],
    body: TS.ControlTransitionInput, reasons: TRANSITION_REASONS, output: { status: 201, body: TS.ControlTransitionSingle },
  }, async (ctx) => {
    const scope = ctx.scope!;
    const res = await ctx.services.control.schemaCommand(scope.project.id, { kind: 'transitionCreate', branch: scope.branch, body: ctx.inv.body });
    if (res.kind !== 'transition') throw new Error('unexpected schema command result');
    return control(ctx, 'SchemaTransition', 'created', res.outcome.record, 201);
  }),
  execute: op('SchemaTransition.Execute', {
    summary: 'Run expand → backfill → contract online (reads and writes keep being served)', routes: [{ method: 'POST', path: 'SchemaTransition/:id/execute' }], params: BY_ID,
    output: { status: 202, body: TS.ControlTransitionSingle }, errors: STATE_ERRORS,
  }, async (ctx) => control(ctx, 'SchemaTransition', 'executing', await command(ctx, 'transitionExecute'), 202)),
  rollback: op('SchemaTransition.Rollback', {
    summary: 'Bring the old shape and values back (`rolledBack`)', routes: [{ method: 'POST', path: 'SchemaTransition/:id/rollback' }], params: BY_ID,
    output: { status: 202, body: TS.ControlTransitionSingle }, errors: STATE_ERRORS,
  }, async (ctx) => control(ctx, 'SchemaTransition', 'rollingBack', await command(ctx, 'transitionRollback'), 202)),
};
