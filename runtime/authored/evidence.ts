import type { OperationContext } from '../operations/types.js';
import type { AuditRow, AuthoredAuditDetails, Decision, RecordedUsage } from '../pipeline/audit-row.js';
import type { HandlerDef, InvokeFailure, InvokeOutcome } from './types.js';

/** The usage kinds an invocation records (CONTRACT "Sandbox and limits" → Evidence); their quota kinds add `.monthly`. */
export const INVOCATIONS_USAGE = 'authored.invocations';
export const CPU_MS_USAGE = 'authored.cpu_ms';
/** The longest stack an audit row keeps (a deep recursion's stack is megabytes of the same frames). */
export const MAX_STACK_CHARS = 8 * 1024;

interface Verdict { outcome: string; decision: Decision; reasonCode: string; status: number }

/** CONTRACT "Failures": how each ending is answered, and so how its row reads. */
function verdictOf(f: InvokeFailure): Verdict {
  switch (f.kind) {
    case 'threw': return { outcome: 'threw', decision: 'Error', reasonCode: 'Handler.Threw', status: 502 };
    case 'cpuLimit': return { outcome: 'cpuLimit', decision: 'Error', reasonCode: 'Handler.CpuLimit', status: 504 };
    case 'wallClockLimit': return { outcome: 'wallClockLimit', decision: 'Error', reasonCode: 'Handler.WallClockLimit', status: 504 };
    case 'memoryLimit': return { outcome: 'memoryLimit', decision: 'Error', reasonCode: 'Handler.MemoryLimit', status: 502 };
    case 'resultInvalid': return { outcome: 'resultInvalid', decision: 'Error', reasonCode: 'Handler.ResultInvalid', status: 502 };
    // ctx.error(...) or a host refusal let escape: the code's own answer, a denial when it is one.
    case 'canonical': return { outcome: 'canonical', decision: f.error.code === 'ACCESS_DENIED' ? 'Deny' : 'Allow', reasonCode: f.error.reasonCode, status: f.error.status };
  }
}

/** The authored part of an invocation's row. */
export function invocationDetails(handler: HandlerDef, outcome: InvokeOutcome, stack?: string): AuthoredAuditDetails {
  const u = outcome.usage;
  const out: AuthoredAuditDetails = {
    stage: 'authored', handler: handler.name, sha256: handler.sha256,
    outcome: outcome.ok ? 'ok' : verdictOf(outcome.failure).outcome,
    cpuMs: u.cpuMs, wallMs: u.wallMs, peakMemoryBytes: u.peakMemoryBytes,
  };
  const trace = stack ?? (!outcome.ok && outcome.failure.kind === 'threw' ? outcome.failure.stack : undefined);
  if (trace !== undefined && trace !== '') out.stack = trace.length > MAX_STACK_CHARS ? `${trace.slice(0, MAX_STACK_CHARS)}…` : trace;
  return out;
}

/** `authored.cpu_ms` counts whole milliseconds, at least 1 for any run (a quota of N ms allows N runs of under a millisecond, not infinitely many). */
export const cpuUnits = (cpuMs: number): number => Math.max(1, Math.ceil(cpuMs));

/**
 * Evidence of one invocation (CONTRACT "Sandbox and limits" → Evidence): one audit row under the
 * invocation's correlation id, besides the rows its `ctx.db` calls leave, carrying the usage event
 * `authored.invocations` (1; the row is the event, as a request's row is: docs/usage.md), and a
 * usage event `authored.cpu_ms` with the CPU milliseconds it used. Buffered; never awaited.
 * Whatever ended the run (a throw, a limit) it ran, so it counts: only an invocation refused
 * before it ran (admitAuthoredInvocation) records nothing.
 */
export function recordAuthoredInvocation(ctx: OperationContext, handler: HandlerDef, outcome: InvokeOutcome, stack?: string): void {
  const v: Verdict = outcome.ok ? { outcome: 'ok', decision: 'Allow', reasonCode: 'Handler.Completed', status: 200 } : verdictOf(outcome.failure);
  const metered = ctx.services.usage !== undefined && ctx.scope !== null;
  const usage: RecordedUsage | null = metered ? { kind: INVOCATIONS_USAGE, quantity: 1, dimensions: { handler: handler.name } } : null;
  const at = Date.now();
  const row: AuditRow = {
    at,
    correlationId: ctx.inv.correlationId,
    tenantId: ctx.scope?.tenant.id ?? null,
    projectId: ctx.scope?.project.id ?? null,
    actor: ctx.actor.label,
    operationId: ctx.operationId,
    decision: v.decision,
    reasonCode: v.reasonCode,
    status: v.status,
    stage: 6,
    evaluatedFilter: null,
    fieldMasks: [],
    details: { authored: invocationDetails(handler, outcome, stack) },
    usage,
  };
  ctx.services.audit.record(row);
  if (!metered) return;
  ctx.services.usage!.record({
    tenantId: ctx.scope!.tenant.id, projectId: ctx.scope!.project.id, kind: CPU_MS_USAGE, quantity: cpuUnits(outcome.usage.cpuMs),
    at: new Date(at).toISOString(), operationId: ctx.operationId, correlationId: ctx.inv.correlationId, dimensions: { handler: handler.name },
  });
}
