import { validationFailed } from '../errors/service-error.js';
import { parseFilter, type FilterableEntity } from '../filter/parse.js';
import { isStorableTimestamp } from '../filter/flat-filter.js';
import { UUID_TEXT } from '../control/rows.js';
import type { TriggerInput } from './definitions-store.js';
import { cronProblem, nextFire, validTimeZone } from './next-fire.js';
import { MISFIRE_POLICIES, SCHEDULING_DEFAULTS, TRIGGER_KINDS, type MisfirePolicy, type TriggerKind, type TriggerSpec } from './types.js';

/**
 * A trigger body (`POST …/taskdefinition/{id}/triggers`) checked by kind
 * (CONTRACT "Scheduling", Triggers): each kind takes its own members and
 * `misfire`, nothing else. The route's JSON Schema refuses wrong types first;
 * this checks what needs the kind, the clock, the publication or the database.
 */

export const EVENT_KINDS = ['created', 'updated', 'deleted'] as const;
type EventKind = (typeof EVENT_KINDS)[number];

/** The longest cron expression and zone name taken (a pattern of 6 fields is far shorter). */
export const MAX_CRON_LENGTH = 256;
export const MAX_ZONE_LENGTH = 64;
/** About 68 years: any longer interval is a mistake, and `now + interval` must stay a date. */
export const MAX_INTERVAL_SECONDS = 2_147_483_647;

const MEMBERS: Record<TriggerKind, readonly string[]> = {
  cron: ['cron', 'timezone'],
  interval: ['intervalSeconds'],
  once: ['at'],
  event: ['entity', 'kinds', 'filter'],
  webhook: ['receiverId'],
};

/** What a trigger is checked against: the branch's serving publication, the project's receivers, the clock. */
export interface TriggerChecks {
  entity(name: string): FilterableEntity | undefined;
  receiverExists(id: string): Promise<boolean>;
  now: Date;
}

const bad = (reason: string, message: string, field: string): Error => validationFailed(`Trigger.${reason}`, message, field);

function kindOf(body: Record<string, unknown>): TriggerKind {
  const kind = body.kind;
  if (typeof kind !== 'string' || !(TRIGGER_KINDS as readonly string[]).includes(kind)) {
    throw bad('InvalidKind', `'kind' is one of ${TRIGGER_KINDS.join(', ')}`, 'kind');
  }
  return kind as TriggerKind;
}

function misfireOf(body: Record<string, unknown>): MisfirePolicy {
  const m = body.misfire ?? SCHEDULING_DEFAULTS.misfire;
  if (typeof m !== 'string' || !(MISFIRE_POLICIES as readonly string[]).includes(m)) throw bad('InvalidMisfire', `'misfire' is one of ${MISFIRE_POLICIES.join(', ')}`, 'misfire');
  return m as MisfirePolicy;
}

function cronSpec(body: Record<string, unknown>, now: Date): { spec: TriggerSpec; next: Date } {
  const { cron, timezone = SCHEDULING_DEFAULTS.timezone } = body;
  if (typeof timezone !== 'string' || timezone.length > MAX_ZONE_LENGTH || !validTimeZone(timezone)) {
    throw bad('InvalidTimeZone', `'timezone' is an IANA time zone such as Europe/Berlin, not '${String(timezone).slice(0, MAX_ZONE_LENGTH)}'`, 'timezone');
  }
  if (typeof cron !== 'string' || cron.length > MAX_CRON_LENGTH) throw bad('InvalidCron', `'cron' is a cron expression of at most ${MAX_CRON_LENGTH} characters`, 'cron');
  const problem = cronProblem(cron, timezone);
  if (problem !== null) throw bad('InvalidCron', `'cron' is not a valid cron expression: ${problem}`, 'cron');
  const spec: TriggerSpec = { kind: 'cron', cron, timezone };
  const next = nextFire(spec, now);
  if (next === null) throw bad('InvalidCron', `'cron' never fires after ${now.toISOString()}`, 'cron');
  return { spec, next };
}

function intervalSpec(body: Record<string, unknown>, now: Date): { spec: TriggerSpec; next: Date } {
  const s = body.intervalSeconds;
  if (typeof s !== 'number' || !Number.isInteger(s) || s < 1 || s > MAX_INTERVAL_SECONDS) {
    throw bad('InvalidInterval', `'intervalSeconds' is an integer from 1 to ${MAX_INTERVAL_SECONDS}`, 'intervalSeconds');
  }
  const spec: TriggerSpec = { kind: 'interval', intervalSeconds: s };
  return { spec, next: new Date(now.getTime() + s * 1_000) };
}

/** A time in the past is kept: the scanner finds it due and fires it at once. */
function onceSpec(body: Record<string, unknown>): { spec: TriggerSpec; next: Date } {
  const at = body.at;
  if (typeof at !== 'string' || !isStorableTimestamp(at)) throw bad('InvalidAt', "'at' is an ISO 8601 date-time with a zone (2030-01-01T09:00:00Z)", 'at');
  const next = new Date(at);
  return { spec: { kind: 'once', at: next.toISOString() }, next };
}

/** The realtime subscriptions' filter, checked the way they check it: against the entity, field names only. */
function eventSpec(body: Record<string, unknown>, checks: TriggerChecks): Extract<TriggerSpec, { kind: 'event' }> {
  const { entity: name, kinds = [...EVENT_KINDS], filter } = body;
  const entity = typeof name === 'string' ? checks.entity(name) : undefined;
  if (entity === undefined) throw bad('UnknownEntity', `'entity' names no entity of this branch's serving publication: '${String(name).slice(0, 64)}'`, 'entity');
  if (!Array.isArray(kinds) || kinds.length === 0 || kinds.some((k) => !(EVENT_KINDS as readonly unknown[]).includes(k)) || new Set(kinds).size !== kinds.length) {
    throw bad('InvalidKinds', `'kinds' is a non-empty list of distinct ${EVENT_KINDS.join(', ')}`, 'kinds');
  }
  if (filter !== undefined && filter !== null) parseFilter(filter, entity);
  return { kind: 'event', entity: entity.entityName, kinds: kinds as EventKind[], ...(filter === undefined || filter === null ? {} : { filter }) };
}

async function webhookSpec(body: Record<string, unknown>, checks: TriggerChecks): Promise<Extract<TriggerSpec, { kind: 'webhook' }>> {
  const id = body.receiverId;
  if (typeof id !== 'string' || !UUID_TEXT.test(id) || !(await checks.receiverExists(id.toLowerCase()))) {
    throw bad('UnknownReceiver', `'receiverId' names no inbound webhook receiver of this project`, 'receiverId');
  }
  return { kind: 'webhook', receiverId: id.toLowerCase() };
}

/** The checked trigger and its first fire: cron from now, interval now + its period, once its `at`; event and webhook none. */
export async function parseTrigger(raw: unknown, checks: TriggerChecks): Promise<TriggerInput> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('InvalidBody', 'body must be a JSON object', 'kind');
  const body = raw as Record<string, unknown>;
  const kind = kindOf(body);
  for (const key of Object.keys(body)) {
    if (key !== 'kind' && key !== 'misfire' && !MEMBERS[kind].includes(key)) throw bad('UnknownProperty', `a ${kind} trigger has no member '${key}'`, key);
  }
  const misfire = misfireOf(body);
  switch (kind) {
    case 'cron': {
      const { spec, next } = cronSpec(body, checks.now);
      return { spec, misfire, entity: null, receiverId: null, nextFireAt: next };
    }
    case 'interval': {
      const { spec, next } = intervalSpec(body, checks.now);
      return { spec, misfire, entity: null, receiverId: null, nextFireAt: next };
    }
    case 'once': {
      const { spec, next } = onceSpec(body);
      return { spec, misfire, entity: null, receiverId: null, nextFireAt: next };
    }
    case 'event': {
      const spec = eventSpec(body, checks);
      return { spec, misfire, entity: spec.entity, receiverId: null, nextFireAt: null };
    }
    case 'webhook': {
      const spec = await webhookSpec(body, checks);
      return { spec, misfire, entity: null, receiverId: spec.receiverId, nextFireAt: null };
    }
  }
}
