import type { AuthoredOperation } from '../publication/authored-operations.js';
import { TOOL_KINDS } from './tool-kinds.js';

/** The MCP tool of an authored operation (CONTRACT "Operations"): `Order.approve` (instance) or `operations.recalculate`. */
export const operationToolName = (op: Pick<AuthoredOperation, 'entity' | 'name'>): string => `${op.entity ?? 'operations'}.${op.name}`;

/**
 * The authored operations MCP serves as tools. Left out: one named like an
 * entity tool (`Order.list`) or an earlier operation's tool, and a project
 * operation whose `input` is no object schema (its arguments are the input,
 * and MCP's arguments and `inputSchema` are objects).
 */
export function servableMcpOperations(ops: readonly AuthoredOperation[]): AuthoredOperation[] {
  const taken = new Set<string>();
  const out: AuthoredOperation[] = [];
  for (const op of ops) {
    const name = operationToolName(op);
    if (op.entity !== null ? Object.hasOwn(TOOL_KINDS, op.name) : op.input.type !== 'object') continue;
    if (taken.has(name)) continue;
    taken.add(name);
    out.push(op);
  }
  return out;
}
