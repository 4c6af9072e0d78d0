import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { validationFailed } from '../../errors/service-error.js';
import { sharedSchemas } from '../../publication/openapi-components.js';
import { registeredSchemas } from './schemas.js';
import type { Json, OperationContract, ReasonDecl } from './types.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/**
 * Request bodies checked against the operation's declared schema, by a
 * validator compiled once per schema (ajv), before the handler runs. A
 * failure is a 422 VALIDATION_FAILED naming the field, with the reason codes
 * the operation declares (types.ts ReasonDecl).
 */
const COMPONENTS_ID = 'plinth:components';

let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction>();

/** Built at the first validation, when every operation module (and so every named schema) has loaded. */
export function validatorOf(schemaName: string): ValidateFunction {
  let fn = compiled.get(schemaName);
  if (fn !== undefined) return fn;
  if (ajv === null) {
    ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, validateFormats: true });
    addFormats(ajv);
    // OpenAPI's `password` format is a UI hint, not a constraint.
    ajv.addFormat('password', true);
    const schemas: Json = {};
    for (const [name, s] of registeredSchemas()) schemas[name] = s.schema;
    // Declared schemas may refer to the document's shared components (`Meta`, `Page`, `Filter`) as the OpenAPI document does.
    for (const [name, s] of Object.entries(sharedSchemas())) schemas[name] ??= s;
    ajv.addSchema({ $id: COMPONENTS_ID, components: { schemas } });
  }
  fn = ajv.compile({ $ref: `${COMPONENTS_ID}#/components/schemas/${schemaName}` });
  compiled.set(schemaName, fn);
  return fn;
}

/** `/fields/2/type` → `fields[2].type`: the field names the 422s of hand-written checks used. */
function fieldOf(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc === '' ? p : `${acc}.${p}`), '');
}

type Kind = 'UnknownProperty' | 'MissingProperty' | 'InvalidProperty';
const PRIORITY: Record<Kind, number> = { UnknownProperty: 0, MissingProperty: 1, InvalidProperty: 2 };

function classify(e: ErrorObject): { kind: Kind; field: string; message: string } {
  if (e.keyword === 'additionalProperties' || e.keyword === 'unevaluatedProperties') {
    const extra = String((e.params as { additionalProperty?: string; unevaluatedProperty?: string }).additionalProperty ?? (e.params as { unevaluatedProperty?: string }).unevaluatedProperty);
    const field = fieldOf(e.instancePath, extra);
    return { kind: 'UnknownProperty', field, message: `unknown property '${field}'` };
  }
  if (e.keyword === 'required') {
    const field = fieldOf(e.instancePath, (e.params as { missingProperty: string }).missingProperty);
    return { kind: 'MissingProperty', field, message: `'${field}' is required` };
  }
  const field = fieldOf(e.instancePath);
  return { kind: 'InvalidProperty', field, message: `'${field}' ${e.message ?? 'is invalid'}` };
}

const topOf = (field: string): string => field.split(/[.[]/, 1)[0]!;
/** `grants[3].grant` → 3: the item of a top-level array a problem is in; -1 when none. */
const itemOf = (field: string): number => { const m = /^[^.[]*\[(\d+)\]/.exec(field); return m === null ? -1 : Number(m[1]); };

/**
 * The one error to report: an unknown property before a missing one before an invalid one, as the hand-written checks did;
 * with `order` (ReasonDecl.order), an unknown top-level property, then the first of `order`'s fields with a problem
 * (in an array, its first item with one; in one item, unknown before missing before invalid, as an item check goes).
 */
export function firstError(errors: readonly ErrorObject[], order?: readonly string[]): { kind: Kind; field: string; message: string } {
  const all = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf').map(classify);
  const pool = all.length > 0 ? all : errors.map(classify);
  if (order !== undefined) {
    const unknown = pool.find((e) => e.kind === 'UnknownProperty' && !order.includes(topOf(e.field)));
    if (unknown !== undefined) return unknown;
    const rank = (e: { field: string }): number => { const i = order.indexOf(topOf(e.field)); return i < 0 ? order.length : i; };
    const before = (a: { field: string; kind: Kind }, b: { field: string; kind: Kind }): boolean =>
      rank(a) !== rank(b) ? rank(a) < rank(b) : itemOf(a.field) !== itemOf(b.field) ? itemOf(a.field) < itemOf(b.field) : PRIORITY[a.kind] < PRIORITY[b.kind];
    return pool.reduce((best, e) => (before(e, best) ? e : best));
  }
  return pool.reduce((best, e) => (PRIORITY[e.kind] < PRIORITY[best.kind] ? e : best));
}

/** The reason of a problem: `fields['grants[]']` for one inside an item of `grants`, else `fields.grants` for one in `grants`, else the prefix's. */
function reasonOf(reasons: ReasonDecl, kind: Kind, field: string): string {
  if (kind === 'UnknownProperty') return `${reasons.prefix}.${kind}`;
  const inItem = itemOf(field) >= 0 ? reasons.fields?.[`${topOf(field)}[]`] : undefined;
  return inItem ?? reasons.fields?.[topOf(field)] ?? `${reasons.prefix}.${kind}`;
}

/** Throws the 422 of a body that does not match the contract's schema; returns when it does (or when none is declared). */
export function validateBody(contract: OperationContract, operationId: string, body: unknown): void {
  const schema = contract.body;
  if (schema === undefined) return;
  const reasons = contract.reasons ?? { prefix: operationId.split('.').slice(0, -1).join('.') || operationId };
  if (body === undefined || body === null) {
    if (contract.bodyOptional === true) return;
    throw validationFailed(`${reasons.prefix}.InvalidBody`, 'body must be a JSON object');
  }
  const expectsObject = schema.schema.type === 'object';
  if (expectsObject && (typeof body !== 'object' || Array.isArray(body))) throw validationFailed(`${reasons.prefix}.InvalidBody`, 'body must be a JSON object');
  const validate = validatorOf(schema.name);
  if (validate(body)) return;
  const order = reasons.order === 'properties' ? Object.keys((schema.schema.properties ?? {}) as Json) : undefined;
  const e = firstError(validate.errors ?? [], order);
  throw validationFailed(reasonOf(reasons, e.kind, e.field), e.message, e.field === '' ? undefined : e.field);
}
