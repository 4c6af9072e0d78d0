import type { AuthoredOperation } from '../publication/authored-operations.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import { invalidParams } from './jsonrpc.js';
import { INVOKE_SCOPE, type McpScope } from './scopes.js';
import { operationToolName, servableMcpOperations } from './operation-tool-names.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An authored operation's tool: what `tools/list` shows and `tools/call` runs. */
export interface OperationTool {
  name: string;
  op: AuthoredOperation;
  /** Invoking an operation may change data whatever its surface: the invoke scope. */
  scope: McpScope;
  bindingId: string;
  descriptor: Json;
}

function descriptorOf(name: string, op: AuthoredOperation): Json {
  const inputSchema: Json = op.entity === null ? op.input : {
    type: 'object',
    properties: { id: { type: 'string', description: `The ${op.entity} row's id.` }, input: { ...op.input, description: 'The operation\'s input.' } },
    required: ['id', 'input'],
    additionalProperties: false,
  };
  return {
    name,
    title: op.entity === null ? `operation ${op.name}` : `${op.entity} ${op.name}`,
    description: `${op.entity === null ? 'Project operation' : `Operation on one ${op.entity} row`} \`${op.name}\` (authored handler ${op.handler.name}).`,
    inputSchema,
    // An EdgeHandler's ctx.db is read-only (CONTRACT "Operations"); the other surfaces may write.
    annotations: { readOnlyHint: op.handler.surface === 'EdgeHandler', openWorldHint: false },
  };
}

/** The publication's operation tools by name, built once per publication. */
export function operationToolsOf(pub: CompiledPublication): ReadonlyMap<string, OperationTool> {
  return pub.derive('mcp-operation-tools', () => new Map(servableMcpOperations(pub.authoredOperations).map((op) => {
    const name = operationToolName(op);
    return [name, { name, op, scope: INVOKE_SCOPE, bindingId: `mcp:${op.capabilityId}`, descriptor: descriptorOf(name, op) }] as const;
  })));
}

/**
 * A tool call's arguments as the operation's invocation: `{ id, input }` for
 * an instance operation (other keys, a missing or non-string `id`, a missing
 * `input` are -32602), the arguments themselves as the input of a project
 * operation (validated against `input` by the operation: 422 → -32000 with `field`).
 */
export function operationCallOf(tool: OperationTool, raw: unknown): { id: string | null; body: unknown } {
  const args = raw === undefined || raw === null ? {} : raw;
  if (!isObject(args)) throw invalidParams('arguments must be an object');
  if (tool.op.entity === null) return { id: null, body: args };
  for (const k of Object.keys(args)) if (k !== 'id' && k !== 'input') throw invalidParams(`unknown argument '${k.slice(0, 100)}' for tool ${tool.name}`);
  if (typeof args.id !== 'string') throw invalidParams(`argument 'id' is required for tool ${tool.name} and must be a string`);
  if (!Object.hasOwn(args, 'input')) throw invalidParams(`argument 'input' is required for tool ${tool.name}`);
  return { id: args.id, body: args.input };
}
