/** Reading and validating a served OpenAPI document in tests. */
import assert from 'node:assert/strict';
import { validate, compileErrors } from '@readme/openapi-parser';
import type { Json } from './expect.js';

/** Validates a deep clone (the parser dereferences its input in place). */
export async function assertValidOpenApi(doc: Json): Promise<void> {
  const result = await validate(JSON.parse(JSON.stringify(doc)));
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
}

/** The node a `$ref` points at (followed until it is not a reference). */
export function deref(doc: Json, node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  let cur: any = doc;
  for (const part of (node.$ref as string).replace(/^#\//, '').split('/')) cur = cur?.[part];
  assert.ok(cur, `unresolved ${node.$ref}`);
  return deref(doc, cur);
}

/** Required and known property names of an object schema (allOf merged). */
export function shape(doc: Json, node: Json): { required: string[]; known: string[] } {
  const n = deref(doc, node);
  const out = { required: [...(n.required ?? [])] as string[], known: Object.keys(n.properties ?? {}) };
  for (const part of (n.allOf ?? []) as Json[]) {
    const s = shape(doc, part);
    out.required.push(...s.required);
    out.known.push(...s.known);
  }
  return out;
}
