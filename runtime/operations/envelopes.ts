import type { OperationContext, Result } from './types.js';

/** `{ data, meta: { correlationId } }`, the single-result envelope. */
export const single = (ctx: OperationContext, data: unknown, status = 200, headers?: Record<string, string>): Result => ({
  status,
  body: { data, meta: { correlationId: ctx.inv.correlationId } },
  ...(headers === undefined ? {} : { headers }),
});

export interface Page {
  number: number;
  size: number;
  totalCount?: number;
  next?: string;
  prev?: string;
}

/** `{ data: T[], page, meta }`, the list envelope. */
export const list = (ctx: OperationContext, data: unknown[], page: Page): Result => ({
  status: 200,
  body: { data, page, meta: { correlationId: ctx.inv.correlationId } },
});

/** `{ surface, state, correlationId, data? }`, the control-plane envelope (CONTRACT: Bootstrap 4). */
export const control = (ctx: OperationContext, surface: string, state: string, data?: unknown, status = 200): Result => ({
  status,
  body: { surface, state, correlationId: ctx.inv.correlationId, ...(data === undefined ? {} : { data }) },
});

export const noContent: Result = { status: 204, body: undefined };
