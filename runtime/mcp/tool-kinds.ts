import type { EntityOperationKind } from '../publication/operations.js';

/**
 * The tool verbs of an entity (CONTRACT: MCP tools) and the entity operation
 * each one is. The tool builder (tools.ts), the exposure bindings
 * (publication/mcp-bindings.ts) and the capability matrix read this one table.
 */
export const TOOL_KINDS = { list: 'List', get: 'Read', create: 'Create', update: 'Update', delete: 'Delete' } as const satisfies Record<string, EntityOperationKind>;
export type ToolVerb = keyof typeof TOOL_KINDS;

/** The verb of the tool that projects an entity operation kind, or undefined when MCP projects none. */
export const toolVerbOf = (kind: EntityOperationKind): ToolVerb | undefined =>
  (Object.keys(TOOL_KINDS) as ToolVerb[]).find((v) => TOOL_KINDS[v] === kind);
