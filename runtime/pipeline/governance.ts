import type { OperationContext } from '../operations/types.js';

/**
 * Stage 3: merge governance envelopes through the project ancestry chain
 * (fail-closed). No envelope carries a rule yet, so every call passes; the
 * stage exists so a later envelope (quotas, allowed protocols, region) is a
 * change here and nowhere else.
 */
export function evaluateGovernance(_ctx: OperationContext): void {}
