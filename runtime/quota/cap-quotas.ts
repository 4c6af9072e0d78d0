import { DEFAULT_WINDOW } from './catalog.js';
import type { QuotaRecord } from './store.js';

/**
 * Governance caps (envelope `maxQuotas`, caps.ts) as quota records the ledger
 * counts like any other: a cap holds even where the project sets no quota of
 * its own, or only a soft one.
 */
export const CAP_PREFIX = 'governance:';
/** A cap has no stored row: its durable count is read under this id. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
export const isCap = (rec: QuotaRecord): boolean => rec.id.startsWith(CAP_PREFIX);
/** Counters by quota id; a cap's id (`governance:<kind>`) is the same in every project, so its key adds the project. */
export const counterKey = (rec: QuotaRecord): string => (isCap(rec) ? `${rec.id}@${rec.projectId}` : rec.id);

/** Each governance cap as a hard quota of the project over the calendar month (`summary` lists it with quotaId `governance:<kind>`). */
export function capQuotas(projectId: string, caps: Readonly<Record<string, number>>): QuotaRecord[] {
  const at = new Date(0).toISOString();
  return Object.entries(caps).map(([kind, limit]) => ({
    id: `${CAP_PREFIX}${kind}`, tenantId: '', projectId, kind, limit, mode: 'hard', window: DEFAULT_WINDOW, dimensions: {},
    state: 'active', createdAt: at, updatedAt: at,
  }));
}
