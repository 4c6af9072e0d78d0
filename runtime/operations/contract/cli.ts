import { registeredSchema } from './schemas.js';
import type { DeclaredOperation, Json } from './types.js';

/** A CLI command as `/api/ContractProjection/cli` lists it (CONTRACT: Developer tools). */
export interface CliCommand {
  name: string;
  summary: string;
  operationId: string;
  method: string;
  path: string;
  args: Array<{ name: string; required: boolean }>;
  flags: Array<{ name: string; type: string; required: boolean }>;
  body: boolean;
  /** Who may run it: `user` (a project user token or an API key, with the grants listed) or `admin` (the platform admin token). */
  authn: string;
  /** Grants an entity command needs; a platform command's grants depend on its arguments (its operation says which). */
  requiredGrants?: readonly string[];
}

const kebab = (s: string): string => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/**
 * `branch create`, `proposal merge`, `identity sessions revoke`: the
 * operation id's segments in kebab case, without the `ControlPlane`
 * namespace. Ids are unique, so names are.
 */
export const commandNameOf = (operationId: string): string =>
  operationId.split('.').filter((s, i) => !(i === 0 && s === 'ControlPlane')).map(kebab).join(' ');

function jsonTypeOf(schema: Json | undefined): string {
  if (schema === undefined) return 'json';
  const t = schema.type;
  const first = Array.isArray(t) ? t.find((x) => x !== 'null') : t;
  return typeof first === 'string' ? first : 'json';
}

/** Top-level body properties as flags (`--name`), resolving one `$ref` level. */
function bodyFlags(op: DeclaredOperation): CliCommand['flags'] {
  const schema = op.contract.body?.schema;
  if (schema === undefined) return [];
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, p]) => {
    const target = typeof p.$ref === 'string' ? registeredSchema(p.$ref.split('/').pop()!)?.schema : p;
    return { name: kebab(name), type: jsonTypeOf(target), required: required.has(name) };
  });
}

/** The commands of declared operations: one per operation (its first route), named from the route unless the contract names it. */
export function declaredCommands(ops: readonly DeclaredOperation[], basePath: string): CliCommand[] {
  return ops.filter((op) => op.contract.output.upgrade !== true).map((op) => {
    const route = op.contract.routes[0];
    const query = Object.entries(op.contract.query ?? {}).map(([name, d]) => ({ name: kebab(name), type: jsonTypeOf(d.schema), required: d.required === true }));
    return {
      name: op.contract.cli ?? commandNameOf(op.id),
      summary: op.contract.summary,
      operationId: op.id,
      method: route.method,
      path: `${basePath}/${route.path.replace(/:(\w+)/g, '{$1}')}`,
      args: [...route.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1]!, required: true })),
      flags: [...query, ...bodyFlags(op)],
      body: op.contract.body !== undefined,
      authn: op.authn,
    };
  });
}
