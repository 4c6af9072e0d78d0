import { readHead } from '../../control/schema-change.js';
import type { SchemaCommand } from '../../control/schema-commands.js';
import { listTransitions, readTransition, transitionRecord } from '../../control/schema-transitions.js';
import { TRANSITION_PHASES, parseTransition } from '../../control/transition-plan.js';
import { control } from '../envelopes.js';
import { noGrants, type OperationContext, type OperationSpec } from '../types.js';

/** `/api/SchemaTransition` (CONTRACT "Schema transitions"): project-scoped, the platform admin's. */
const op = (id: string, execute: OperationSpec['execute']): OperationSpec => ({ id, authn: 'admin', scope: 'project', grants: noGrants, execute });

async function command(ctx: OperationContext, kind: 'transitionExecute' | 'transitionRollback'): Promise<Record<string, unknown>> {
  const scope = ctx.scope!;
  const cmd: SchemaCommand = { kind, transitionId: ctx.inv.params.id ?? '', branch: scope.branch, actor: ctx.actor.label, correlationId: ctx.inv.correlationId };
  const res = await ctx.services.control.schemaCommand(scope.project.id, cmd);
  if (res.kind !== 'transition') throw new Error('unexpected schema command result');
  return res.outcome.record;
}

export const SCHEMA_TRANSITION_SPECS = {
  list: op('SchemaTransition.List', async (ctx) => control(ctx, 'SchemaTransition', 'listed', await listTransitions(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch))),
  read: op('SchemaTransition.Read', async (ctx) => {
    const t = await readTransition(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, ctx.inv.params.id ?? '');
    return control(ctx, 'SchemaTransition', 'read', transitionRecord(t));
  }),
  preview: op('SchemaTransition.Preview', async (ctx) => {
    const head = await readHead(ctx.services.db, ctx.scope!.project.id, ctx.scope!.branch, false);
    const spec = parseTransition(ctx.inv.body, head.model);
    return control(ctx, 'SchemaTransition', 'previewed', { kind: spec.kind, entityName: spec.entityName, phases: [...TRANSITION_PHASES] });
  }),
  create: op('SchemaTransition.Create', async (ctx) => {
    const scope = ctx.scope!;
    const res = await ctx.services.control.schemaCommand(scope.project.id, { kind: 'transitionCreate', branch: scope.branch, body: ctx.inv.body });
    if (res.kind !== 'transition') throw new Error('unexpected schema command result');
    return control(ctx, 'SchemaTransition', 'created', res.outcome.record, 201);
  }),
  execute: op('SchemaTransition.Execute', async (ctx) => control(ctx, 'SchemaTransition', 'executing', await command(ctx, 'transitionExecute'), 202)),
  rollback: op('SchemaTransition.Rollback', async (ctx) => control(ctx, 'SchemaTransition', 'rollingBack', await command(ctx, 'transitionRollback'), 202)),
};
