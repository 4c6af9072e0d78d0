/**
 * A handler declaration's body checked on its own (CONTRACT "Handlers", "Operations",
 * "Sandbox and limits"): what does not depend on the model. Entity names and the
 * uniqueness of names are checked against the model the change applies to
 * (handler-plan.ts); the source is compiled by the caller (compile.ts).
 */
import { validationFailed } from '../errors/service-error.js';
import { isPattern, type Envelope } from '../governance/envelope.js';
import { isAssetPath } from '../source-assets/paths.js';
import { checkOperationSchema } from './operation-schema.js';
import { DEFAULT_LIMITS, HANDLER_SURFACES, OPERATION_SURFACES, type HandlerLimits, type HandlerSurface, type OperationDecl } from './types.js';

export const HANDLER_NAME_PATTERN = '^[a-z][A-Za-z0-9]{0,62}$';
const NAME = new RegExp(HANDLER_NAME_PATTERN);
/** A JavaScript export name: `default` or an identifier. */
export const EXPORT_PATTERN = '^[A-Za-z_$][A-Za-z0-9_$]{0,127}$';
const EXPORT = new RegExp(EXPORT_PATTERN);
export const MAX_HANDLER_GRANTS = 100;
/** The most any limit may be, whatever an envelope allows (a day of wall-clock, 4 GiB of heap). */
export const LIMIT_CEILING: Readonly<HandlerLimits> = { cpuMs: 86_400_000, wallMs: 86_400_000, memoryMiB: 4096 };

/** A handler as declared: everything but what compiling its source pins (`sha256`, `bundleSha256`). */
export interface HandlerDeclaration {
  name: string;
  surface: HandlerSurface;
  source: string;
  export: string;
  grants: string[];
  limits: HandlerLimits;
  operation?: OperationDecl;
  workflow?: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KEYS = ['name', 'surface', 'source', 'export', 'grants', 'limits', 'operation', 'workflow'];

export const isHandlerName = (v: unknown): v is string => typeof v === 'string' && NAME.test(v);

/**
 * Checks a declaration body. `pathName` is the `{name}` of a PUT (the body's `name`, if
 * given, must be the same). Every refusal is a 422 naming the field.
 */
export function parseDeclaration(body: unknown, envelope: Envelope | null, pathName?: string): HandlerDeclaration {
  if (!isObject(body)) throw validationFailed('Handler.InvalidBody', 'body must be a JSON object');
  for (const k of Object.keys(body)) if (!KEYS.includes(k)) throw validationFailed('Handler.UnknownProperty', `unknown property '${k.slice(0, 64)}'`, k.slice(0, 64));
  const name = body.name ?? pathName;
  if (!isHandlerName(name)) throw validationFailed('Handler.InvalidName', `name must match ${HANDLER_NAME_PATTERN}`, 'name');
  if (pathName !== undefined && name !== pathName) throw validationFailed('Handler.InvalidName', `the body names '${name}', the path '${pathName}'`, 'name');
  const surface = body.surface;
  if (typeof surface !== 'string' || !(HANDLER_SURFACES as readonly string[]).includes(surface)) {
    throw validationFailed('Handler.InvalidSurface', `surface is one of ${HANDLER_SURFACES.join(', ')}`, 'surface');
  }
  const s = surface as HandlerSurface;
  if (!isAssetPath(body.source)) throw validationFailed('Handler.InvalidSource', 'source is a source-asset path (`src/orders.ts`)', 'source');
  const exportName = body.export ?? 'default';
  if (typeof exportName !== 'string' || !EXPORT.test(exportName)) throw validationFailed('Handler.InvalidExport', 'export is `default` or an identifier', 'export');
  const out: HandlerDeclaration = { name, surface: s, source: body.source, export: exportName, grants: grantsOf(body.grants), limits: limitsOf(s, body.limits, envelope) };
  if (body.operation !== undefined) {
    if (!OPERATION_SURFACES.has(s)) throw validationFailed('Handler.OperationNotAllowed', `only ${[...OPERATION_SURFACES].join(', ')} handlers declare an operation`, 'operation');
    out.operation = operationOf(body.operation, name);
  }
  if (body.workflow !== undefined) {
    if (s !== 'DurableWorkflow') throw validationFailed('Handler.WorkflowNotAllowed', 'only a DurableWorkflow handler declares a workflow', 'workflow');
    if (!isObject(body.workflow)) throw validationFailed('Handler.InvalidWorkflow', 'workflow is an object', 'workflow');
    out.workflow = body.workflow;
  }
  return out;
}

function grantsOf(raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > MAX_HANDLER_GRANTS) throw validationFailed('Handler.InvalidGrants', `grants is a list of at most ${MAX_HANDLER_GRANTS} grant strings`, 'grants');
  raw.forEach((g, i) => {
    if (!isPattern(g)) throw validationFailed('Handler.InvalidGrants', 'a grant looks like entity:<Entity|*>:<read|insert|update|delete|*>', `grants[${i}]`);
  });
  return [...new Set(raw as string[])].sort();
}

/** The surface's defaults with what the body asks for; EdgeHandler's are fixed; an envelope's caps bound them. */
function limitsOf(surface: HandlerSurface, raw: unknown, envelope: Envelope | null): HandlerLimits {
  const limits: HandlerLimits = { ...DEFAULT_LIMITS[surface] };
  if (raw !== undefined) {
    if (!isObject(raw)) throw validationFailed('Handler.InvalidLimits', 'limits is an object { cpuMs?, wallMs?, memoryMiB? }', 'limits');
    for (const [k, v] of Object.entries(raw)) {
      if (!(k in limits)) throw validationFailed('Handler.InvalidLimits', `unknown limit '${k.slice(0, 64)}' (cpuMs, wallMs, memoryMiB)`, `limits.${k.slice(0, 64)}`);
      const key = k as keyof HandlerLimits;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > LIMIT_CEILING[key]) {
        throw validationFailed('Handler.InvalidLimits', `${key} is an integer from 1 to ${LIMIT_CEILING[key]}`, `limits.${key}`);
      }
      if (surface === 'EdgeHandler' && v !== limits[key]) {
        throw validationFailed('Handler.InvalidLimits', `an EdgeHandler's limits are fixed (${key} ${limits[key]})`, `limits.${key}`);
      }
      limits[key] = v;
    }
  }
  for (const [k, cap] of Object.entries(envelope?.maxHandlerLimits ?? {})) {
    const key = k as keyof HandlerLimits;
    if (limits[key] > cap) throw validationFailed('Handler.LimitsExceedEnvelope', `the governance envelope caps ${key} at ${cap} (this handler: ${limits[key]})`, `limits.${key}`);
  }
  return limits;
}

function operationOf(raw: unknown, handlerName: string): OperationDecl {
  if (!isObject(raw)) throw validationFailed('Handler.InvalidOperation', 'operation is an object { name?, entity?, input, output? }', 'operation');
  for (const k of Object.keys(raw)) {
    if (!['name', 'entity', 'input', 'output'].includes(k)) throw validationFailed('Handler.InvalidOperation', `unknown operation property '${k.slice(0, 64)}'`, `operation.${k.slice(0, 64)}`);
  }
  const name = raw.name ?? handlerName;
  if (!isHandlerName(name)) throw validationFailed('Handler.InvalidOperation', `operation.name must match ${HANDLER_NAME_PATTERN}`, 'operation.name');
  const out: OperationDecl = { name, input: checkOperationSchema(raw.input, 'operation.input') };
  if (raw.entity !== undefined) {
    if (typeof raw.entity !== 'string' || !/^[A-Z][A-Za-z0-9]{0,62}$/.test(raw.entity)) throw validationFailed('Handler.InvalidOperation', 'operation.entity is an entity name', 'operation.entity');
    out.entity = raw.entity;
  }
  if (raw.output !== undefined) out.output = checkOperationSchema(raw.output, 'operation.output');
  return out;
}
