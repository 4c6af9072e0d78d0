import { AUTH_STRENGTHS, type AuthStrength } from '../identity/actor.js';
import type { Envelope, StepUpStrength } from './envelope.js';
import { keyOf, overlaps, parsePattern, VERBS, type Pattern } from './patterns.js';

const rank = (s: AuthStrength): number => AUTH_STRENGTHS.indexOf(s);

/**
 * An effective envelope compiled once per change (runtime/governance/cache.ts):
 * pattern sets keyed `Entity:verb` so a concrete grant is checked with at
 * most four set lookups, the way stage 4's grantCovered checks wildcards.
 */
export class CompiledEnvelope {
  /** The merged envelope, as `GET …/governance/envelope` shows it. */
  readonly effective: Envelope;
  readonly maxPageSize: number | null;
  private readonly denied: readonly Pattern[];
  private readonly deniedKeys: ReadonlySet<string>;
  /** Null: no allowedGrants anywhere in the chain, so nothing is outside. */
  private readonly allowedKeys: ReadonlySet<string> | null;
  private readonly strength: ReadonlyMap<string, StepUpStrength>;

  constructor(effective: Envelope) {
    this.effective = effective;
    this.maxPageSize = effective.maxPageSize ?? null;
    this.denied = (effective.deniedGrants ?? []).map((t) => parsePattern(t)!);
    this.deniedKeys = new Set(this.denied.map((p) => keyOf(p.entity, p.verb)));
    this.allowedKeys = effective.allowedGrants === undefined ? null : new Set(effective.allowedGrants.map((t) => {
      const p = parsePattern(t)!;
      return keyOf(p.entity, p.verb);
    }));
    const strength = new Map<string, StepUpStrength>();
    for (const [t, s] of Object.entries(effective.requireStrength ?? {})) {
      const p = parsePattern(t)!;
      strength.set(keyOf(p.entity, p.verb), s);
    }
    this.strength = strength;
  }

  /**
   * Whether `grant` exceeds the envelope: something it covers (`entity:Doc:*`
   * covers every verb on Doc; `entity:*:read` every entity's read) matches a
   * denied pattern or lies outside the allowed ones. The envelope governs
   * `entity:` grants; a grant of another area never exceeds it.
   */
  exceeds(grant: string): boolean {
    const g = parsePattern(grant);
    if (g === null) return false;
    if (this.deniedHit(g)) return true;
    if (this.allowedKeys === null) return false;
    const verbs = g.verb === '*' ? VERBS : [g.verb];
    return verbs.some((v) => !this.allowedCovers(g.entity, v));
  }

  /** The strongest strength a requireStrength pattern matching `grant` asks for; null when none does. */
  requiredStrength(grant: string): StepUpStrength | null {
    if (this.strength.size === 0) return null;
    const g = parsePattern(grant);
    if (g === null) return null;
    let best: StepUpStrength | null = null;
    for (const key of [keyOf(g.entity, g.verb), keyOf(g.entity, '*'), keyOf('*', g.verb), keyOf('*', '*')]) {
      const s = this.strength.get(key);
      if (s !== undefined && (best === null || rank(s) > rank(best))) best = s;
    }
    return best;
  }

  private deniedHit(g: Pattern): boolean {
    if (this.denied.length === 0) return false;
    if (g.entity !== '*' && g.verb !== '*') {
      const d = this.deniedKeys;
      return d.has(keyOf(g.entity, g.verb)) || d.has(keyOf(g.entity, '*')) || d.has(keyOf('*', g.verb)) || d.has('*:*');
    }
    return this.denied.some((p) => overlaps(p, g)); // a wildcard grant (creation time only)
  }

  /** Whether the allowed patterns cover verb `v` on `entity` (every entity when `*`: only an allowed `*` entity does). */
  private allowedCovers(entity: string, v: string): boolean {
    const a = this.allowedKeys!;
    if (a.has(keyOf('*', v)) || a.has('*:*')) return true;
    return entity !== '*' && (a.has(keyOf(entity, v)) || a.has(keyOf(entity, '*')));
  }
}

/** Whether `strength` (absent: password) is weaker than `required`. */
export const weakerThan = (strength: AuthStrength | undefined, required: StepUpStrength): boolean => rank(strength ?? 'password') < rank(required);
