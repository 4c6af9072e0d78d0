import { notFound } from '../errors/service-error.js';
import type { OperationContext, Result } from '../operations/types.js';
import type { BindingVerdict, StabilityMap } from '../versioning/stability-cache.js';
import { bindingIdOf } from './grants.js';

type Headers = Readonly<Record<string, string>>;

function verdict(ctx: OperationContext, map: StabilityMap): Headers | null {
  if (map.size === 0) return null; // the common case: nothing announced for the project
  const v = map.get(bindingIdOf(ctx));
  if (v === undefined) return null;
  if (v.retired) throw notFound('ExposureBinding.Retired', `the binding ${bindingIdOf(ctx)} is retired`);
  return v.headers;
}

/**
 * Between stages 2 and 3: a Retired binding fails closed, whatever protocol the
 * invocation came by (keyed by the binding it resolves to, so a new protocol is
 * covered with no code of its own); a Deprecated one returns the headers its
 * responses carry. Synchronous on a cache hit.
 */
export function bindingStability(ctx: OperationContext): Headers | null | Promise<Headers | null> {
  const source = ctx.services.stability;
  if (source === undefined || ctx.scope === null) return null;
  const map = source.of(ctx.scope.project.id);
  return map instanceof Promise ? map.then((m) => verdict(ctx, m)) : verdict(ctx, map);
}

/**
 * The verdict on a binding a protocol names itself (an MCP resource or
 * prompt, a gRPC method whose binding is not its entity operation's), for
 * lists that hide Retired bindings and answers that carry a deprecation.
 * Undefined for a Stable (or Experimental, Beta) binding.
 */
export async function verdictFor(ctx: OperationContext, bindingId: string): Promise<BindingVerdict | undefined> {
  return (await stabilityMapOf(ctx)).get(bindingId);
}

const NONE: StabilityMap = new Map();

/** The project's announced verdicts (empty without a stability source or a scope). */
export async function stabilityMapOf(ctx: OperationContext): Promise<StabilityMap> {
  const source = ctx.services.stability;
  if (source === undefined || ctx.scope === null) return NONE;
  return source.of(ctx.scope.project.id);
}

/** A Deprecated binding's answer with its Deprecation, Sunset and Link headers. */
export const withDeprecation = (result: Result, headers: Headers): Result => ({ ...result, headers: { ...result.headers, ...headers } });
