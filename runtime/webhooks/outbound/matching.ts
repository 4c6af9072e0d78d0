import { validationFailed } from '../../errors/service-error.js';
import type { EventEnvelope } from '../../events/event-store.js';

/** An endpoint's payload filter: one comparison on a JSON path of the event envelope. */
export interface EndpointFilter {
  op: 'startsWith' | 'endsWith' | 'eq';
  path: string;
  value: string;
}

const OPS = ['startsWith', 'endsWith', 'eq'];
const PATH = /^\$(\.[A-Za-z_][A-Za-z0-9_]{0,63}){1,8}$/;

export function parseEndpointFilter(raw: unknown): EndpointFilter | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw validationFailed('Webhook.InvalidFilter', 'filter must be an object { op, path, value }', 'filter');
  const f = raw as Record<string, unknown>;
  for (const k of Object.keys(f)) if (!['op', 'path', 'value'].includes(k)) throw validationFailed('Webhook.InvalidFilter', `unknown filter property '${k}'`, `filter.${k}`);
  if (typeof f.op !== 'string' || !OPS.includes(f.op)) throw validationFailed('Webhook.InvalidFilter', `filter.op must be one of ${OPS.join(', ')}`, 'filter.op');
  if (typeof f.path !== 'string' || !PATH.test(f.path)) throw validationFailed('Webhook.InvalidFilter', 'filter.path must be a JSON path such as $.type or $.data.entity', 'filter.path');
  if (typeof f.value !== 'string' || f.value.length > 512 || f.value.includes('\u0000')) throw validationFailed('Webhook.InvalidFilter', 'filter.value must be a string of at most 512 characters', 'filter.value');
  return { op: f.op as EndpointFilter['op'], path: f.path, value: f.value };
}

/** `entity.Order.created` exactly, or a prefix when it ends in `*` (`entity.Order.*`, `*`). */
export function parseEventTypeFilter(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 200 || !/^[A-Za-z0-9_.*-]+$/.test(raw) || raw.slice(0, -1).includes('*')) {
    throw validationFailed('Webhook.InvalidEventTypeFilter', "eventTypeFilter must be an event type, optionally ending in '*'", 'eventTypeFilter');
  }
  return raw;
}

function select(envelope: EventEnvelope, path: string): unknown {
  let cur: unknown = envelope;
  for (const key of path.slice(2).split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

export function matches(envelope: EventEnvelope, eventTypeFilter: string | null, filter: EndpointFilter | null): boolean {
  if (eventTypeFilter !== null) {
    const ok = eventTypeFilter.endsWith('*') ? envelope.type.startsWith(eventTypeFilter.slice(0, -1)) : envelope.type === eventTypeFilter;
    if (!ok) return false;
  }
  if (filter === null) return true;
  const v = select(envelope, filter.path);
  if (typeof v !== 'string') return false;
  return filter.op === 'eq' ? v === filter.value : filter.op === 'startsWith' ? v.startsWith(filter.value) : v.endsWith(filter.value);
}
