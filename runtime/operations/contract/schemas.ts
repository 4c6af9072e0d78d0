import type { Json, NamedSchema } from './types.js';

/**
 * Named schemas, registered when their module loads. A schema refers to
 * another by `ref(name)`; the OpenAPI document lists those an operation
 * reaches, and the request validator resolves `$ref`s against all of them.
 */
const REGISTRY = new Map<string, NamedSchema>();

/** Registers schemas under their names (unique across the platform: a second definition of a name throws at load). */
export function defineSchemas<K extends string>(defs: Record<K, Json>): Record<K, NamedSchema> {
  const out = {} as Record<K, NamedSchema>;
  for (const [name, schema] of Object.entries(defs) as Array<[K, Json]>) {
    if (REGISTRY.has(name)) throw new Error(`schema ${name} is defined twice`);
    const named: NamedSchema = { name, schema };
    REGISTRY.set(name, named);
    out[name] = named;
  }
  return out;
}

/** A `$ref` to a named schema, as the OpenAPI document's components hold it. */
export const ref = (s: NamedSchema | string): Json => ({ $ref: `#/components/schemas/${typeof s === 'string' ? s : s.name}` });

export const registeredSchema = (name: string): NamedSchema | undefined => REGISTRY.get(name);

export const registeredSchemas = (): ReadonlyMap<string, NamedSchema> => REGISTRY;

const REF = /^#\/components\/schemas\/(.+)$/;

/** The names a schema refers to, directly or through the schemas it refers to, in first-seen order. */
export function reachableSchemaNames(roots: readonly NamedSchema[], lookup: (name: string) => Json | undefined): string[] {
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      const m = k === '$ref' && typeof v === 'string' ? REF.exec(v) : null;
      if (m !== null) enter(m[1]!);
      else visit(v);
    }
  };
  const enter = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    visit(lookup(name));
  };
  for (const r of roots) enter(r.name);
  return [...seen];
}
