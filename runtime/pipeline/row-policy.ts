import type { OperationContext } from '../operations/types.js';

/**
 * Stage 5: row policy, field masks, branch policy and publication pins.
 * No policy language exists yet, so the policy is "no extra filter, no
 * mask": `ctx.rowPolicy` stays null and executors AND it in when set.
 */
export function evaluateRowPolicy(ctx: OperationContext): void {
  ctx.rowPolicy = null;
}
