import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import { ServiceError } from '../errors/service-error.js';
import type { OperationContext } from '../operations/types.js';
import { loadBundle } from './bundles.js';
import { hostBridge, type HostTargets } from './host-bridge.js';
import type { InvocationTx } from './invocation-tx.js';
import { SandboxBusyError, type AuthoredPool, type HandlerDef, type InvokeFailure, type InvokeOutcome, type SandboxContext } from './types.js';

const bridgeError = (reasonCode: string, message: string): ServiceError => new ServiceError('BRIDGE_ERROR', reasonCode, message);

/**
 * The canonical error of a failed invocation (CONTRACT "Operations", Failures).
 * `threw` answers only the thrown message: the stack goes to the audit row
 * (ctx.authored.failure). `resultInvalid` (a return value that is not JSON or
 * is larger than MAX_RESULT_BYTES) is a 502 `Handler.ResultInvalid`.
 */
export function failureError(f: InvokeFailure): ServiceError {
  switch (f.kind) {
    case 'threw':
      return bridgeError('Handler.Threw', f.message);
    case 'cpuLimit':
      return bridgeError('Handler.CpuLimit', 'the handler ran out of CPU time');
    case 'wallClockLimit':
      return bridgeError('Handler.WallClockLimit', 'the handler ran out of wall-clock time');
    case 'memoryLimit':
      return bridgeError('Handler.MemoryLimit', 'the handler ran out of memory');
    case 'resultInvalid':
      return bridgeError('Handler.ResultInvalid', f.message);
    case 'canonical': {
      // `ctx.error(…)` or a host refusal the handler let escape: that error, with its code's own status.
      const e = f.error;
      if (!(ERROR_CODES as readonly string[]).includes(e.code)) return bridgeError('Handler.Threw', e.message);
      return new ServiceError(e.code as ErrorCode, e.reasonCode, e.message, e.field === undefined ? {} : { field: e.field });
    }
  }
}

/**
 * The handler's compiled bundle. Read on the pool before the invocation's
 * transaction opens: on PGlite (one connection) a pool read while it is open
 * would wait for it forever.
 */
export async function loadHandlerCode(ctx: OperationContext, handler: HandlerDef): Promise<string> {
  const code = await loadBundle(ctx.services.db, ctx.scope!.project.id, handler.bundleSha256);
  if (code === null) throw new ServiceError('UNAVAILABLE', 'Handler.BundleMissing', `the compiled code of handler '${handler.name}' is not stored`);
  return code;
}

export interface InvokeOptions {
  ctx: OperationContext;
  pool: AuthoredPool;
  handler: HandlerDef;
  /** The bundle (loadHandlerCode), read before any transaction of the invocation opens. */
  code: string;
  input: unknown;
  /** An instance operation's row id (`ctx.id`). */
  id?: string;
  /** CoreHandler: the invocation's transaction, which its `ctx.db` writes go through. */
  tx?: InvocationTx;
  targets?: HostTargets;
  /** Stops the invocation early (InvokeRequest.signal). */
  signal?: AbortSignal;
  /** A background surface's own `ctx` members (`ctx.run`, `ctx.event`, …). */
  extra?: Record<string, unknown>;
}

/**
 * Runs one invocation of a handler in the sandbox pool: the bundle
 * the publication pinned, the handler's limits, `ctx` from the caller (actor,
 * correlationId, publicationVersion) and a host bridge acting with the
 * caller's authority.
 */
export function invokeHandler(o: InvokeOptions): Promise<InvokeOutcome> {
  const { ctx, handler, code } = o;
  const scope = ctx.scope!;
  const sandbox: SandboxContext = {
    surface: handler.surface,
    ...(o.id === undefined ? {} : { id: o.id }),
    actor: { subjectId: ctx.actor.subjectId, roles: [...ctx.actor.roles], claims: { ...ctx.actor.claims } },
    correlationId: ctx.inv.correlationId,
    publicationVersion: scope.publication.version,
    ...(o.extra === undefined ? {} : { extra: o.extra }),
  };
  return o.pool.invoke({
    code, codeId: handler.bundleSha256, exportName: handler.export, input: o.input, ctx: sandbox, limits: handler.limits,
    host: hostBridge({ parent: ctx, surface: handler.surface, ...(o.tx === undefined ? {} : { tx: o.tx }), ...(o.targets === undefined ? {} : { targets: o.targets }) }),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
  }).catch((err: unknown) => {
    if (err instanceof SandboxBusyError) throw new ServiceError('UNAVAILABLE', 'Handler.Busy', 'every sandbox worker of this node is busy; retry shortly');
    throw err;
  });
}
