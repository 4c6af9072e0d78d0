import { AUTH_STRENGTHS } from '../operations/types.js';
import type { Envelope, StepUpStrength } from './envelope.js';
import { formatPattern, intersectLists, parsePattern, type Pattern } from './patterns.js';

/** One link of a project's ancestry that has an envelope (the project first, then its ancestors, nearest first). */
export interface ChainLink {
  projectId: string;
  envelope: Envelope;
}

const rank = (s: string): number => AUTH_STRENGTHS.indexOf(s as (typeof AUTH_STRENGTHS)[number]);
const patterns = (list: readonly string[]): Pattern[] => list.map((t) => parsePattern(t)!).filter((p) => p !== null);

/**
 * The effective envelope of a chain, merged fail-closed (CONTRACT: Project
 * hierarchy and governance): denied patterns unite, allowed lists intersect
 * (absent when no link sets one: no restriction), the smallest maxPageSize
 * wins, and each requireStrength pattern asks for the strongest strength any
 * link asks for, and each quota cap (maxQuotas) and handler limit cap
 * (maxHandlerLimits) is the smallest any link sets. A child can only narrow what its ancestors allow.
 */
export function mergeChain(chain: readonly ChainLink[]): Envelope {
  const denied = new Set<string>();
  let allowed: Pattern[] | null = null;
  let maxPageSize: number | null = null;
  const strength = new Map<string, StepUpStrength>();
  const caps = new Map<string, number>();
  const handlerCaps = new Map<string, number>();
  // Root first, so the merged lists read from the widest rule down.
  for (let i = chain.length - 1; i >= 0; i--) {
    const e = chain[i]!.envelope;
    for (const d of e.deniedGrants ?? []) denied.add(d);
    if (e.allowedGrants !== undefined) allowed = allowed === null ? patterns(e.allowedGrants) : intersectLists(allowed, patterns(e.allowedGrants));
    if (e.maxPageSize !== undefined) maxPageSize = maxPageSize === null ? e.maxPageSize : Math.min(maxPageSize, e.maxPageSize);
    for (const [p, s] of Object.entries(e.requireStrength ?? {})) {
      const held = strength.get(p);
      if (held === undefined || rank(s) > rank(held)) strength.set(p, s);
    }
    for (const [kind, cap] of Object.entries(e.maxQuotas ?? {})) caps.set(kind, Math.min(cap, caps.get(kind) ?? cap));
    for (const [key, cap] of Object.entries(e.maxHandlerLimits ?? {})) handlerCaps.set(key, Math.min(cap, handlerCaps.get(key) ?? cap));
  }
  const out: Envelope = {};
  if (denied.size > 0) out.deniedGrants = [...denied];
  if (allowed !== null) out.allowedGrants = [...new Set(allowed.map(formatPattern))];
  if (maxPageSize !== null) out.maxPageSize = maxPageSize;
  if (strength.size > 0) out.requireStrength = Object.fromEntries(strength);
  if (caps.size > 0) out.maxQuotas = Object.fromEntries(caps);
  if (handlerCaps.size > 0) out.maxHandlerLimits = Object.fromEntries(handlerCaps);
  return out;
}
