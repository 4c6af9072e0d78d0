import { notFound } from '../errors/service-error.js';
import { stabilityMapOf } from '../pipeline/binding-stability.js';
import type { DeprecationNotice, StabilityMap } from '../versioning/stability-cache.js';
import type { McpRequestContext } from './context.js';

/**
 * Binding stability as MCP shows it (docs/mcp.md "Binding stability"): a
 * Retired tool, resource or prompt is absent from its list (and reading a
 * retired resource or prompt fails closed, as calling a retired tool does at
 * dispatch); a Deprecated one stays listed with `_meta.service.deprecation`
 * on its list entry and on the results it answers.
 */
export interface McpStability {
  retired(bindingId: string): boolean;
  /** The announcement of a Deprecated binding, else undefined. */
  notice(bindingId: string): DeprecationNotice | undefined;
}

const view = (map: StabilityMap): McpStability => ({
  retired: (id) => map.get(id)?.retired === true,
  notice: (id) => {
    const v = map.get(id);
    return v === undefined || v.retired ? undefined : v.notice;
  },
});

export const mcpStability = async (rc: McpRequestContext): Promise<McpStability> => view(await stabilityMapOf(rc.ctx));

/** A list entry with its deprecation in `_meta.service.deprecation` (the entry unchanged when the binding is not Deprecated). */
export function withNotice(entry: Record<string, unknown>, notice: DeprecationNotice | undefined): Record<string, unknown> {
  return notice === undefined ? entry : { ...entry, _meta: { service: { deprecation: notice } } };
}

/** Fails closed like dispatch does for a Retired binding: the `Mcp.Request` operation's own refusal (-32000 NOT_FOUND). */
export function refuseRetired(s: McpStability, bindingId: string): void {
  if (s.retired(bindingId)) throw notFound('ExposureBinding.Retired', `the binding ${bindingId} is retired`);
}
