/**
 * Handlers as changes of a publication's model (CONTRACT "Handlers"): adding, replacing
 * and dropping a pinned HandlerDef. Pure, like planChange for entities: the schema
 * journal replays these on the locked head, so a change is checked against the model
 * it really applies to (an operation's entity exists there, its name is free there).
 */
import { conflict, notFound, validationFailed } from '../errors/service-error.js';
import type { ProjectModel } from '../publication/model.js';
import type { HandlerDef } from './types.js';

export const HANDLER_ACTIONS = ['addHandler', 'alterHandler', 'dropHandler'] as const;
export type HandlerAction = (typeof HANDLER_ACTIONS)[number];
export const isHandlerAction = (a: string): a is HandlerAction => (HANDLER_ACTIONS as readonly string[]).includes(a);

/** What one handler change did (the journal's and the proposal diff's vocabulary). */
export interface HandlerPlan {
  op: HandlerAction;
  name: string;
  before: HandlerDef | null;
  after: HandlerDef | null;
}

/** A handler change as a migration carries it: the pinned definition (add, alter) or `{ name }` (drop). */
export interface HandlerChangeInput {
  action: HandlerAction;
  body: HandlerDef | { name: string };
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The model with `handlers` replaced; absent when empty, so a model without handlers hashes as before they existed. */
export function withHandlers(model: ProjectModel, handlers: HandlerDef[]): ProjectModel {
  const { handlers: _old, ...rest } = model;
  return handlers.length === 0 ? rest : { ...rest, handlers: [...handlers].sort(byName) };
}

export const handlersOf = (model: ProjectModel): HandlerDef[] => model.handlers ?? [];
export const findHandler = (model: ProjectModel, name: string): HandlerDef | undefined => handlersOf(model).find((h) => h.name === name);

/** Handlers whose operation is bound to `entityName` (an entity they rely on may not be dropped under them). */
export const handlersOnEntity = (model: ProjectModel, entityName: string): HandlerDef[] => handlersOf(model).filter((h) => h.operation?.entity === entityName);

/** Applies one handler change to a model. 409 for a taken name, 404 for an unknown one, 422 for an operation the model cannot hold. */
export function planHandlerChange(model: ProjectModel, change: HandlerChangeInput): { plan: HandlerPlan; model: ProjectModel } {
  const name = change.body.name;
  const existing = findHandler(model, name) ?? null;
  const others = handlersOf(model).filter((h) => h.name !== name);
  if (change.action === 'dropHandler') {
    if (existing === null) throw notFound('Handler.NotFound', `handler '${name}' does not exist`);
    return { plan: { op: 'dropHandler', name, before: existing, after: null }, model: withHandlers(model, others) };
  }
  const def = change.body as HandlerDef;
  if (change.action === 'addHandler' && existing !== null) throw conflict('Handler.Exists', `handler '${name}' already exists`, 'name');
  if (change.action === 'alterHandler' && existing === null) throw notFound('Handler.NotFound', `handler '${name}' does not exist`);
  const op = def.operation;
  if (op !== undefined) {
    if (op.entity !== undefined && !model.entities.some((e) => e.entityName === op.entity)) {
      throw validationFailed('Handler.UnknownEntity', `entity '${op.entity}' does not exist on this branch`, 'operation.entity');
    }
    const taken = others.find((h) => h.operation?.name === op.name);
    if (taken !== undefined) throw conflict('Handler.OperationExists', `operation '${op.name}' is already declared by handler '${taken.name}'`, 'operation.name');
  }
  return { plan: { op: change.action, name, before: existing, after: def }, model: withHandlers(model, [...others, def]) };
}

/** JSON with sorted keys (a model read back from jsonb has its keys reordered). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The handler changes that turn `from`'s handlers into `to`'s, one per differing name, in name order. */
export function handlerChangesBetween(from: ProjectModel, to: ProjectModel): HandlerChangeInput[] {
  const a = new Map(handlersOf(from).map((h) => [h.name, h]));
  const b = new Map(handlersOf(to).map((h) => [h.name, h]));
  const out: HandlerChangeInput[] = [];
  for (const n of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const before = a.get(n);
    const after = b.get(n);
    if (after === undefined) out.push({ action: 'dropHandler', body: { name: n } });
    else if (before === undefined) out.push({ action: 'addHandler', body: after });
    else if (canonical(before) !== canonical(after)) out.push({ action: 'alterHandler', body: after });
  }
  return out;
}

/** The proposal diff's handler entries (CONTRACT "Handlers"): `{ op, name }` per differing handler. */
export const handlerDiff = (from: ProjectModel, to: ProjectModel): Array<{ op: HandlerAction; name: string }> =>
  handlerChangesBetween(from, to).map((c) => ({ op: c.action, name: c.body.name }));

/** A handler as the routes and the journal show it (CONTRACT record, without `publicationVersion`): the bundle's name stays inside. */
export function publicHandler(h: HandlerDef): Record<string, unknown> {
  return {
    name: h.name, surface: h.surface, source: h.source, sha256: h.sha256, export: h.export, grants: h.grants, limits: h.limits,
    ...(h.operation === undefined ? {} : { operation: h.operation }),
  };
}
