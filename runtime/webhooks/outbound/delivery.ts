import { createHmac } from 'node:crypto';
import type { EventEnvelope } from '../../events/event-store.js';

/** One delivery attempt on the wire (docs/webhooks.md): its body, its signature, how its answer is read, when it is tried again. */

/** `t=<unix>,v1=<hex hmac-sha256(secret, "<t>.<raw body>")>` */
export function signatureHeader(secret: string, rawBody: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** The body a subscriber receives: `{ type, data }`, data = the envelope's data plus its identity fields. */
export const deliveryPayload = (e: EventEnvelope): { type: string; data: Record<string, unknown> } => ({
  type: e.type,
  data: { id: e.id, occurredAt: e.occurredAt, tenantId: e.tenantId, projectId: e.projectId, correlationId: e.correlationId, publicationVersion: e.publicationVersion, ...e.data },
});

/** Exponential backoff with jitter: base·2^(n-1), capped at 1 h, times a random factor in [0.5, 1]. */
export function backoffMs(baseDelayMs: number, attemptsMade: number): number {
  const raw = Math.min(3_600_000, baseDelayMs * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
  return Math.round(raw * (0.5 + Math.random() * 0.5));
}

/** 2xx succeeds; 408, 429, 5xx and network errors retry; anything else dead-letters at once. */
export const classify = (status: number | null): 'success' | 'retry' | 'permanent' =>
  status === null ? 'retry' : status >= 200 && status < 300 ? 'success' : status === 408 || status === 429 || status >= 500 ? 'retry' : status >= 400 ? 'permanent' : 'retry';

/** The first 200 bytes of a failed answer, printable ASCII only, for the attempt record. */
export async function excerpt(res: Response): Promise<string> {
  try {
    const reader = res.body?.getReader();
    if (reader === undefined) return '';
    const { value } = await reader.read();
    await reader.cancel();
    return value === undefined ? '' : Buffer.from(value).toString('utf8', 0, Math.min(value.length, 200)).replace(/[^\x20-\x7e]/g, ' ');
  } catch {
    return '';
  }
}
