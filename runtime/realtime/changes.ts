import type { EventEnvelope } from '../events/event-store.js';

/** One change as values: names only, never the row's values (spec: change events). */
export interface ChangeNotice {
  kind: string;
  entity: string;
  entityId: string;
  changedFields: readonly string[];
  eventId: string;
  occurredAt: string;
  correlationId: string;
  publicationVersion: number;
}

/** A logged entity event as a change, and the channel group (entity and branch) it is delivered to. */
export interface Change {
  notice: ChangeNotice;
  group: string;
}

export const groupKey = (entity: string, branch: string): string => `${entity}\u0000${branch}`;

/** The change an entity event announces; null for an event that names no entity row. */
export function changeOf(e: EventEnvelope): Change | null {
  const data = e.data as { entity?: unknown; entityId?: unknown; changedFields?: unknown; branch?: unknown };
  if (typeof data.entity !== 'string' || typeof data.entityId !== 'string') return null;
  return {
    // Key order is the wire order of the realtime message (tailOf).
    notice: {
      kind: e.type.slice(e.type.lastIndexOf('.') + 1), entity: data.entity, entityId: data.entityId,
      changedFields: Array.isArray(data.changedFields) ? (data.changedFields as string[]) : [],
      eventId: e.id, occurredAt: e.occurredAt, correlationId: e.correlationId, publicationVersion: e.publicationVersion,
    },
    group: groupKey(data.entity, typeof data.branch === 'string' ? data.branch : 'main'),
  };
}

/** The change as a subscriber under a row policy sees it: masked fields leave `changedFields` (never their values: there are none). */
export function visibleTo(n: ChangeNotice, masked: readonly string[]): ChangeNotice {
  if (masked.length === 0 || !n.changedFields.some((f) => masked.includes(f))) return n;
  return { ...n, changedFields: n.changedFields.filter((f) => !masked.includes(f)) };
}

/** The realtime message's tail (`"kind":…}`), encoded once per event and spliced behind each channel's subscription id. */
export const tailOf = (n: ChangeNotice): string => JSON.stringify(n).slice(1);
