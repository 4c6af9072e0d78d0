import type { OperationContext } from '../operations/types.js';
import type { AuthoredAuditDetails } from '../pipeline/audit-row.js';
import type { HandlerDef, HostAnswer, HostCall } from './types.js';

/** Lines one invocation may write; past it one row says so and the rest are dropped (a loop must not flood the audit log). */
export const MAX_LOG_LINES = 100;
/** The longest message kept (characters); longer ones are cut and end in `…`. */
export const MAX_LOG_MESSAGE_CHARS = 2_048;
/** The largest `fields` kept (serialized JSON characters); larger ones are replaced by `{ truncated: true }`. */
export const MAX_LOG_FIELDS_CHARS = 8_192;

export type LogLevel = 'info' | 'warn' | 'error';
export type LogTargets = Record<`log.${LogLevel}`, (call: HostCall) => Promise<HostAnswer>>;

const DONE: HostAnswer = { ok: true, value: null };

function messageOf(raw: unknown): string {
  const text = typeof raw === 'string' ? raw : raw === undefined ? '' : (() => { try { return JSON.stringify(raw) ?? String(raw); } catch { return String(raw); } })();
  return text.length > MAX_LOG_MESSAGE_CHARS ? `${text.slice(0, MAX_LOG_MESSAGE_CHARS)}…` : text;
}

/** A plain object is kept as is (when small); any other value is kept as `{ value }`. */
function fieldsOf(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  const obj = typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : { value: raw };
  let size: number;
  try {
    size = JSON.stringify(obj).length;
  } catch {
    return { truncated: true };
  }
  return size > MAX_LOG_FIELDS_CHARS ? { truncated: true } : obj;
}

/**
 * The `log.info|warn|error` host targets of one invocation (`ctx.log.info(msg, fields?)`):
 * each line is an audit row under the invocation's correlation id (`stage: 'authored'`,
 * reason `Handler.Log`, with `level`, `message`, `fields`), readable with `GET /api/audit`.
 * Logging never fails the handler: a bad argument is coerced, an oversized one cut, a line past
 * MAX_LOG_LINES dropped. Make one set per invocation (it counts that invocation's lines).
 */
export function authoredLogTargets(ctx: OperationContext, handler: HandlerDef): LogTargets {
  let lines = 0;
  const write = (level: LogLevel, message: string, fields: Record<string, unknown> | undefined): void => {
    const authored: AuthoredAuditDetails = { stage: 'authored', handler: handler.name, sha256: handler.sha256, level, message };
    if (fields !== undefined) authored.fields = fields;
    ctx.services.audit.record({
      at: Date.now(), correlationId: ctx.inv.correlationId, tenantId: ctx.scope?.tenant.id ?? null, projectId: ctx.scope?.project.id ?? null,
      actor: ctx.actor.label, operationId: ctx.operationId, decision: 'Allow', reasonCode: 'Handler.Log', status: 200, stage: 6,
      evaluatedFilter: null, fieldMasks: [], details: { authored }, usage: null,
    });
  };
  const target = (level: LogLevel) => async (call: HostCall): Promise<HostAnswer> => {
    lines++;
    if (lines <= MAX_LOG_LINES) write(level, messageOf(call.args[0]), fieldsOf(call.args[1]));
    else if (lines === MAX_LOG_LINES + 1) write('warn', `more than ${MAX_LOG_LINES} log lines in one invocation; the rest are dropped`, undefined);
    return DONE;
  };
  return { 'log.info': target('info'), 'log.warn': target('warn'), 'log.error': target('error') };
}
