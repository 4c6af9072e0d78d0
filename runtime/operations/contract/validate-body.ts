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

/** The one error to report: an unknown property before a missing one before an invalid one, as the hand-written checks did. */
function firstError(errors: readonly ErrorObject[]): { kind: Kind; field: string; message: string } {
  const all = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf').map(classify);
  const pool = all.length > 0 ? all : errors.map(classify);
  return pool.reduce((best, e) => (PRIORITY[e.kind] < PRIORITY[best.kind] ? e : best));
}

function reasonOf(reasons: ReasonDecl, kind: Kind, field: string): string {
  const top = field.split(/[.[]/, 1)[0]!;
  return (kind !== 'UnknownProperty' ? reasons.fields?.[top] : undefined) ?? `${reasons.prefix}.${kind}`;
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
  const e = firstError(validate.errors ?? []);
  throw validationFailed(reasonOf(reasons, e.kind, e.field), e.message, e.field === '' ? undefined : e.field);
}
