import { validationFailed } from '../errors/service-error.js';
import { findHandler } from '../authored/handler-plan.js';
import type { ProjectModel } from '../publication/model.js';
import type { DefinitionInput } from './definitions-store.js';
import { OVERLAP_POLICIES, SCHEDULING_DEFAULTS, SCHEDULING_LIMITS, TASK_HANDLER_SURFACES, type OverlapPolicy, type RetryPolicy } from './types.js';

/**
 * A task definition body `{ name, handler, input?, retry?, timeoutSeconds?, overlap? }`
 * (CONTRACT "Scheduling") with SCHEDULING_DEFAULTS filled in. POST and PUT take the
 * same body; a PUT replaces every member, so an omitted one returns to its default.
 * The route's JSON Schema refuses wrong types and bounds first (with these reason
 * codes); this repeats the bounds for callers without it and checks what needs
 * the publication: `handler` must be a background handler the branch serves.
 */

/** Definition names: a letter, then letters, digits, `_` and `-`, up to 63 characters (like handler names, plus `_` and `-`). */
export const DEFINITION_NAME_PATTERN = '^[a-zA-Z][A-Za-z0-9_-]{0,62}$';
const NAME = new RegExp(DEFINITION_NAME_PATTERN);
const MEMBERS = ['name', 'handler', 'input', 'retry', 'timeoutSeconds', 'overlap'];

const bad = (reason: string, message: string, field: string): Error => validationFailed(`TaskDefinition.${reason}`, message, field);
const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

function retryOf(raw: unknown): RetryPolicy {
  if (raw === undefined) return { ...SCHEDULING_DEFAULTS.retry };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('InvalidRetry', "'retry' is an object { maxAttempts, backoffSeconds, maxBackoffSeconds }", 'retry');
  const r = { ...SCHEDULING_DEFAULTS.retry, ...(raw as Partial<RetryPolicy>) };
  for (const key of Object.keys(raw)) {
    if (!(key in SCHEDULING_DEFAULTS.retry)) throw bad('InvalidRetry', `'retry' has no member '${key}'`, `retry.${key}`);
  }
  if (!isInt(r.maxAttempts, 1, SCHEDULING_LIMITS.maxAttempts)) throw bad('InvalidRetry', `'retry.maxAttempts' is an integer from 1 to ${SCHEDULING_LIMITS.maxAttempts}`, 'retry.maxAttempts');
  for (const key of ['backoffSeconds', 'maxBackoffSeconds'] as const) {
    if (!isInt(r[key], 0, SCHEDULING_LIMITS.maxBackoffSeconds)) throw bad('InvalidRetry', `'retry.${key}' is an integer from 0 to ${SCHEDULING_LIMITS.maxBackoffSeconds}`, `retry.${key}`);
  }
  return { maxAttempts: r.maxAttempts, backoffSeconds: r.backoffSeconds, maxBackoffSeconds: r.maxBackoffSeconds };
}

export function parseDefinition(raw: unknown, model: ProjectModel): DefinitionInput {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('InvalidBody', 'body must be a JSON object', 'name');
  const b = raw as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!MEMBERS.includes(key)) throw bad('UnknownProperty', `a task definition has no member '${key}'`, key);
  if (typeof b.name !== 'string' || !NAME.test(b.name)) throw bad('InvalidName', `'name' matches ${DEFINITION_NAME_PATTERN}`, 'name');
  const handler = typeof b.handler === 'string' ? findHandler(model, b.handler) : undefined;
  if (handler === undefined || !(TASK_HANDLER_SURFACES as readonly string[]).includes(handler.surface)) {
    throw bad('HandlerInvalid', `'handler' names no ${TASK_HANDLER_SURFACES.join(', ')} handler of this branch's serving publication: '${String(b.handler).slice(0, 64)}'`, 'handler');
  }
  if (b.input !== undefined && Buffer.byteLength(JSON.stringify(b.input)) > SCHEDULING_LIMITS.maxInputBytes) {
    throw bad('InputTooLarge', `'input' is at most ${SCHEDULING_LIMITS.maxInputBytes} bytes of JSON`, 'input');
  }
  const timeoutSeconds = b.timeoutSeconds ?? SCHEDULING_DEFAULTS.timeoutSeconds;
  if (!isInt(timeoutSeconds, 1, SCHEDULING_LIMITS.maxTimeoutSeconds)) throw bad('InvalidTimeout', `'timeoutSeconds' is an integer from 1 to ${SCHEDULING_LIMITS.maxTimeoutSeconds}`, 'timeoutSeconds');
  const overlap = b.overlap ?? SCHEDULING_DEFAULTS.overlap;
  if (typeof overlap !== 'string' || !(OVERLAP_POLICIES as readonly string[]).includes(overlap)) throw bad('InvalidOverlap', `'overlap' is one of ${OVERLAP_POLICIES.join(', ')}`, 'overlap');
  return { name: b.name, handler: handler.name, input: b.input ?? null, retry: retryOf(b.retry), timeoutSeconds, overlap: overlap as OverlapPolicy };
}
