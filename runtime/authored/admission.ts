import type { OperationContext } from '../operations/types.js';
import type { QuotaHold } from '../quota/ledger.js';
import type { AdmissionRequest } from '../quota/units.js';
import { cpuUnits } from './evidence.js';
import type { InvokeUsage } from './types.js';

/** The quota kinds an invocation counts toward (CONTRACT "Sandbox and limits" → Evidence). */
export const INVOCATIONS_QUOTA = 'authored.invocations.monthly';
export const CPU_MS_QUOTA = 'authored.cpu_ms.monthly';

/** An admitted invocation's claim on its quotas: settle it with what the run used, or release it when it never ran. */
export interface AuthoredAdmission {
  settle(usage: InvokeUsage): void;
  release(): void;
}

const NOTHING: AuthoredAdmission = { settle: () => {}, release: () => {} };

/** The quota stage reads an operation's metering off its contract; an invocation is described to it the same way. */
function request(ctx: OperationContext, unit: typeof INVOCATIONS_QUOTA | typeof CPU_MS_QUOTA): AdmissionRequest {
  return {
    inv: { correlationId: ctx.inv.correlationId, body: null, operation: { contract: { metering: { unit } } } },
    scope: ctx.scope, operationId: ctx.operationId, entity: null, entityOperation: null,
  };
}

/**
 * Admission of one invocation, before it runs: throws 429 QUOTA_EXCEEDED
 * (`Quota.AuthoredInvocationsMonthly.Exhausted`, `Quota.AuthoredCpuMsMonthly.Exhausted`, with the
 * quota headers) when a hard or reservation quota of either kind is used up, and nothing runs.
 * A CPU quota cannot know the run's cost up front: it admits while at least 1 ms is left and
 * counts the real milliseconds when settled, so one run may pass the limit by its own cost.
 * The caller settles (after any run, failed or not: it used the CPU) or releases (it never ran).
 */
export async function admitAuthoredInvocation(ctx: OperationContext): Promise<AuthoredAdmission> {
  const quotas = ctx.services.quotas;
  if (quotas === undefined || ctx.scope === null) return NOTHING;
  const runs: QuotaHold | null = await quotas.admit(request(ctx, INVOCATIONS_QUOTA));
  let cpu: QuotaHold | null;
  try {
    cpu = await quotas.admit(request(ctx, CPU_MS_QUOTA));
  } catch (err) {
    runs?.release();
    throw err;
  }
  return {
    settle: (usage) => {
      runs?.settleUnits(1);
      cpu?.settleUnits(cpuUnits(usage.cpuMs));
    },
    release: () => {
      runs?.release();
      cpu?.release();
    },
  };
}
