/**
 * An operation's `input` and `output` (CONTRACT "Operations"): JSON Schemas (draft 2020-12)
 * of a small vocabulary, so that every protocol can derive its shapes from them and ajv
 * validates them the same way everywhere. `description` and `additionalProperties` are
 * allowed too: the first is documentation, the second (a boolean or a schema of the same
 * vocabulary) only narrows what passes.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { validationFailed } from '../errors/service-error.js';
import { unsafePatternReason } from './safe-pattern.js';

const KEYWORDS = new Set(['type', 'properties', 'required', 'enum', 'items', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'description', 'additionalProperties']);
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
/** Bounds that keep a declared schema (stored in every publication) small and its validator cheap. */
const MAX_DEPTH = 16;
const MAX_NODES = 1_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const refuse = (field: string, message: string) => validationFailed('Handler.InvalidOperationSchema', message, field);

/** Checks the vocabulary and that ajv compiles it; answers the schema as given. 422 `Handler.InvalidOperationSchema` naming the place. */
export function checkOperationSchema(raw: unknown, field: string): Record<string, unknown> {
  if (!isObject(raw)) throw refuse(field, `${field} is a JSON Schema object`);
  let nodes = 0;
  const walk = (s: unknown, at: string, depth: number): void => {
    if (!isObject(s)) throw refuse(at, 'a schema is an object');
    if (depth > MAX_DEPTH || ++nodes > MAX_NODES) throw refuse(at, `a schema nests at most ${MAX_DEPTH} deep and has at most ${MAX_NODES} schemas`);
    for (const [k, v] of Object.entries(s)) {
      if (!KEYWORDS.has(k)) throw refuse(`${at}.${k.slice(0, 64)}`, `'${k.slice(0, 64)}' is not an allowed keyword (${[...KEYWORDS].join(', ')})`);
      if (k === 'type') {
        const list = Array.isArray(v) ? v : [v];
        if (list.length === 0 || list.some((t) => typeof t !== 'string' || !TYPES.has(t))) throw refuse(`${at}.type`, `type is one of ${[...TYPES].join(', ')} (or a list of them)`);
      } else if (k === 'properties') {
        if (!isObject(v)) throw refuse(`${at}.properties`, 'properties is an object of schemas');
        for (const [p, sub] of Object.entries(v)) walk(sub, `${at}.properties.${p.slice(0, 64)}`, depth + 1);
      } else if (k === 'items') {
        walk(v, `${at}.items`, depth + 1);
      } else if (k === 'additionalProperties') {
        if (typeof v !== 'boolean') walk(v, `${at}.additionalProperties`, depth + 1);
      } else if (k === 'pattern') {
        if (typeof v !== 'string') throw refuse(`${at}.pattern`, 'pattern is a regular expression');
        try {
          new RegExp(v, 'u');
        } catch {
          throw refuse(`${at}.pattern`, 'pattern is not a valid regular expression');
        }
        const unsafe = unsafePatternReason(v);
        if (unsafe !== null) throw refuse(`${at}.pattern`, unsafe);
      }
    }
  };
  walk(raw, field, 0);
  compileOperationSchema(raw, field);
  return raw;
}

// One ajv for every declared schema; each compiled validator is removed from its cache at once
// (validatorOf below keeps its own bounded cache), so declarations cannot grow it.
const ajv = new Ajv2020({ allErrors: false, strict: false, strictSchema: true, logger: false });

function compileOperationSchema(schema: Record<string, unknown>, field: string): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw refuse(field, `the schema does not compile: ${String((err as Error).message).slice(0, 200)}`);
  } finally {
    ajv.removeSchema(schema);
  }
}

const validators = new Map<string, ValidateFunction>();
const MAX_VALIDATORS = 1_000;

/** A validator of a declared (already checked) schema, cached by its JSON text; for the operation routes. */
export function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = validators.get(key);
  if (fn === undefined) {
    fn = compileOperationSchema(schema, 'schema');
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
    validators.set(key, fn);
  }
  return fn;
}
