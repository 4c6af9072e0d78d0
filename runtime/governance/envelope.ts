import { validationFailed } from '../errors/service-error.js';
import { QUOTA_KINDS } from '../quota/catalog.js';

/** The strengths a `requireStrength` entry may ask for (CONTRACT: Project hierarchy and governance). */
export const STEP_UP_STRENGTHS = ['mfa-totp', 'mfa-webauthn'] as const;
export type StepUpStrength = (typeof STEP_UP_STRENGTHS)[number];

/**
 * A project's governance envelope as the admin set it and as it is stored
 * (CONTRACT: Project hierarchy and governance). Patterns are grant strings
 * where `*` stands for any entity or any verb.
 */
export interface Envelope {
  deniedGrants?: string[];
  allowedGrants?: string[];
  maxPageSize?: number;
  requireStrength?: Record<string, StepUpStrength>;
  /**
   * Per quota kind, the most a project under this envelope may consume (docs/usage.md
   * "Governance caps"): its quotas' limits may not exceed it, and it is enforced as a hard
   * quota even where the project sets none.
   */
  maxQuotas?: Record<string, number>;
  /**
   * The most a handler under this envelope may ask for per invocation (CONTRACT "Sandbox and
   * limits"): a declaration whose limits exceed any of these is refused (422).
   */
  maxHandlerLimits?: Partial<Record<HandlerLimitKey, number>>;
}

export const HANDLER_LIMIT_KEYS = ['cpuMs', 'wallMs', 'memoryMiB'] as const;
export type HandlerLimitKey = (typeof HANDLER_LIMIT_KEYS)[number];

const KEYS = ['deniedGrants', 'allowedGrants', 'maxPageSize', 'requireStrength', 'maxQuotas', 'maxHandlerLimits'];
/** Bounds that keep a stored envelope, and the matchers compiled from it, small. */
const MAX_PATTERNS = 200;
const MAX_PAGE_SIZE = 1_000_000_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An envelope pattern: the grant grammar of operations/identity/grants.ts
 * (`entity:<Entity|*>:<read|insert|update|delete|*>`), repeated here so the
 * grant routes can import this folder without an import cycle.
 */
const PATTERN_RE = /^entity:(\*|[A-Z][A-Za-z0-9]{0,62}):(read|insert|update|delete|\*)$/;

export const isPattern = (text: unknown): text is string => typeof text === 'string' && PATTERN_RE.test(text);

function patternList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_PATTERNS) {
    throw validationFailed('Governance.InvalidEnvelope', `${field} must be a list of at most ${MAX_PATTERNS} grant patterns`, `envelope.${field}`);
  }
  value.forEach((p, i) => {
    if (!isPattern(p)) throw validationFailed('Governance.InvalidPattern', `${field}[${i}] must look like entity:<Entity|*>:<read|insert|update|delete|*>`, `envelope.${field}[${i}]`);
  });
  return [...new Set(value as string[])];
}

/**
 * Validates `PUT …/governance/inheritance-policy`'s body `{ envelope: {…} }`
 * and returns the envelope to store: unknown keys, bad patterns, strengths
 * or page sizes are 422s naming the field; nothing is stored then.
 */
export function parseEnvelopeBody(body: unknown): Envelope {
  if (!isObject(body)) throw validationFailed('Governance.InvalidBody', 'body must be a JSON object { envelope: { … } }');
  for (const k of Object.keys(body)) if (k !== 'envelope') throw validationFailed('Governance.UnknownProperty', `unknown property '${k.slice(0, 64)}'`, k.slice(0, 64));
  const raw = body.envelope;
  if (!isObject(raw)) throw validationFailed(raw === undefined ? 'Governance.MissingProperty' : 'Governance.InvalidEnvelope', "'envelope' must be an object", 'envelope');
  for (const k of Object.keys(raw)) if (!KEYS.includes(k)) throw validationFailed('Governance.UnknownProperty', `unknown envelope property '${k.slice(0, 64)}'`, `envelope.${k.slice(0, 64)}`);
  const out: Envelope = {};
  if (raw.deniedGrants !== undefined) out.deniedGrants = patternList(raw.deniedGrants, 'deniedGrants');
  if (raw.allowedGrants !== undefined) out.allowedGrants = patternList(raw.allowedGrants, 'allowedGrants');
  if (raw.maxPageSize !== undefined) {
    const n = raw.maxPageSize;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
      throw validationFailed('Governance.InvalidMaxPageSize', `maxPageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'envelope.maxPageSize');
    }
    out.maxPageSize = n;
  }
  if (raw.requireStrength !== undefined) {
    const rs = raw.requireStrength;
    if (!isObject(rs) || Object.keys(rs).length > MAX_PATTERNS) {
      throw validationFailed('Governance.InvalidEnvelope', `requireStrength must be an object of at most ${MAX_PATTERNS} "<pattern>": "<strength>" entries`, 'envelope.requireStrength');
    }
    const map: Record<string, StepUpStrength> = {};
    for (const [pattern, strength] of Object.entries(rs)) {
      if (!isPattern(pattern)) throw validationFailed('Governance.InvalidPattern', `requireStrength key '${String(pattern).slice(0, 64)}' must be a grant pattern`, 'envelope.requireStrength');
      if (!(STEP_UP_STRENGTHS as readonly unknown[]).includes(strength)) {
        throw validationFailed('Governance.InvalidStrength', `requireStrength values are ${STEP_UP_STRENGTHS.join(' or ')}`, `envelope.requireStrength.${pattern}`);
      }
      map[pattern] = strength as StepUpStrength;
    }
    out.requireStrength = map;
  }
  if (raw.maxQuotas !== undefined) out.maxQuotas = maxQuotasOf(raw.maxQuotas);
  if (raw.maxHandlerLimits !== undefined) out.maxHandlerLimits = maxHandlerLimitsOf(raw.maxHandlerLimits);
  return out;
}

function maxHandlerLimitsOf(raw: unknown): Partial<Record<HandlerLimitKey, number>> {
  if (!isObject(raw)) throw validationFailed('Governance.InvalidEnvelope', `maxHandlerLimits must be an object of ${HANDLER_LIMIT_KEYS.join(', ')} caps`, 'envelope.maxHandlerLimits');
  const out: Partial<Record<HandlerLimitKey, number>> = {};
  for (const [key, cap] of Object.entries(raw)) {
    if (!(HANDLER_LIMIT_KEYS as readonly string[]).includes(key)) {
      throw validationFailed('Governance.UnknownProperty', `maxHandlerLimits keys are ${HANDLER_LIMIT_KEYS.join(', ')}`, `envelope.maxHandlerLimits.${key.slice(0, 64)}`);
    }
    if (typeof cap !== 'number' || !Number.isSafeInteger(cap) || cap < 1) {
      throw validationFailed('Governance.InvalidHandlerLimitCap', 'a handler limit cap is a positive integer', `envelope.maxHandlerLimits.${key}`);
    }
    out[key as HandlerLimitKey] = cap;
  }
  return out;
}

function maxQuotasOf(raw: unknown): Record<string, number> {
  if (!isObject(raw)) throw validationFailed('Governance.InvalidEnvelope', `maxQuotas must be an object of "<quota kind>": <limit> entries`, 'envelope.maxQuotas');
  const out: Record<string, number> = {};
  for (const [kind, limit] of Object.entries(raw)) {
    if (!(QUOTA_KINDS as readonly string[]).includes(kind)) {
      throw validationFailed('Governance.UnknownQuotaKind', `maxQuotas keys are quota kinds: ${QUOTA_KINDS.join(', ')}`, `envelope.maxQuotas.${kind.slice(0, 64)}`);
    }
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
      throw validationFailed('Governance.InvalidQuotaCap', 'a quota cap is a non-negative integer', `envelope.maxQuotas.${kind}`);
    }
    out[kind] = limit;
  }
  return out;
}
