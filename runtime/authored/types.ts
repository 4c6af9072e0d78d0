/**
 * Authored code (CONTRACT "Authored code"): the shapes the parts share. The
 * publication pins handlers (HandlerDef, in ProjectModel.handlers); the
 * sandbox pool runs one invocation (InvokeRequest → InvokeOutcome); the host
 * answers the sandbox's calls (HostCall → HostBridge).
 */

/** The spec's seven authored-code execution surfaces ("exactly seven"). */
export const HANDLER_SURFACES = ['CoreHandler', 'EdgeHandler', 'ManagementHandler', 'ScheduledJob', 'EventConsumer', 'WebhookHandler', 'DurableWorkflow'] as const;
export type HandlerSurface = (typeof HANDLER_SURFACES)[number];

/** Surfaces a caller invokes as an operation (the others run in the background as the project's service profile). */
export const OPERATION_SURFACES: ReadonlySet<HandlerSurface> = new Set(['CoreHandler', 'EdgeHandler', 'ManagementHandler']);

export interface HandlerLimits {
  cpuMs: number;
  wallMs: number;
  memoryMiB: number;
}

/** CONTRACT "Sandbox and limits": defaults per surface; EdgeHandler's are fixed. */
export const DEFAULT_LIMITS: Readonly<Record<HandlerSurface, HandlerLimits>> = {
  CoreHandler: { cpuMs: 1_000, wallMs: 10_000, memoryMiB: 64 },
  ManagementHandler: { cpuMs: 1_000, wallMs: 10_000, memoryMiB: 64 },
  EdgeHandler: { cpuMs: 50, wallMs: 5_000, memoryMiB: 64 },
  ScheduledJob: { cpuMs: 10_000, wallMs: 60_000, memoryMiB: 128 },
  EventConsumer: { cpuMs: 10_000, wallMs: 60_000, memoryMiB: 128 },
  WebhookHandler: { cpuMs: 10_000, wallMs: 60_000, memoryMiB: 128 },
  DurableWorkflow: { cpuMs: 10_000, wallMs: 60_000, memoryMiB: 128 },
};

/** `operation` of a handler declaration (CONTRACT "Operations"). */
export interface OperationDecl {
  name: string;
  /** Set: an instance operation `POST /api/{collection}/{id}/{name}`; absent: `POST /api/operations/{name}`. */
  entity?: string;
  input: Record<string, unknown>;
  output?: Record<string, unknown>;
}

/**
 * A handler as a publication pins it (ProjectModel.handlers, sorted by name).
 * `sha256` is the hex digest of the source file's bytes when declared or last
 * PUT; `bundleSha256` names the compiled bundle (handler_bundles) that runs.
 */
export interface HandlerDef {
  name: string;
  surface: HandlerSurface;
  source: string;
  sha256: string;
  export: string;
  grants: string[];
  limits: HandlerLimits;
  operation?: OperationDecl;
  workflow?: Record<string, unknown>;
  bundleSha256: string;
}

/** What the caller sees of an invocation's actor (`ctx.actor`). */
export interface SandboxActor {
  subjectId: string | null;
  roles: string[];
  claims: Record<string, unknown>;
}

/** Plain data the sandbox exposes as `ctx` members (besides the host calls). */
export interface SandboxContext {
  /** The handler's surface: `ctx.platform` exists only for a ManagementHandler. */
  surface: HandlerSurface;
  id?: string;
  actor: SandboxActor;
  correlationId: string;
  publicationVersion: number;
  /** Surface-specific plain members (`ctx.run`, `ctx.event`, …) for later surfaces. */
  extra?: Record<string, unknown>;
}

/**
 * A call from the sandbox to the host. `target` is a dotted path:
 * `db.<plural>.<method>` (`ctx.db.orders.list(…)`: any plural, the host answers
 * NOT_FOUND for one the publication lacks), `fetch`, `log.<level>`,
 * `platform.<area>.<method>` (ManagementHandler only).
 * Arguments and answers are JSON values (structured-clone safe).
 */
export interface HostCall {
  target: string;
  args: unknown[];
}

/** A host call's refusal as the sandbox sees it: a rejected promise with an Error carrying these. */
export interface HostError {
  code: string;
  reasonCode: string;
  message: string;
  status: number;
  field?: string;
}

export type HostAnswer = { ok: true; value: unknown } | { ok: false; error: HostError };

/** The host side of an invocation: answers each call; the pool forwards calls to it over a MessagePort. */
export interface HostBridge {
  call(call: HostCall): Promise<HostAnswer>;
}

export interface InvokeRequest {
  /** The bundle: one script (esbuild `iife`, globalName `__plinthHandler`) whose exports hold the handler. */
  code: string;
  /** Identifies the bundle (its sha256) for caching a compiled form; never trusted for content. */
  codeId: string;
  exportName: string;
  input: unknown;
  ctx: SandboxContext;
  limits: HandlerLimits;
  host: HostBridge;
  /** The host stops the invocation early (its worker is replaced): it ends as `wallClockLimit`. */
  signal?: AbortSignal;
}

export interface InvokeUsage {
  cpuMs: number;
  wallMs: number;
  peakMemoryBytes: number;
}

/** Why an invocation failed, as CONTRACT "Failures" names them. */
export type InvokeFailure =
  | { kind: 'threw'; message: string; stack?: string }
  | { kind: 'cpuLimit' }
  | { kind: 'wallClockLimit' }
  | { kind: 'memoryLimit' }
  /** `ctx.error(...)`, or a host refusal the handler let escape: the canonical error as is. */
  | { kind: 'canonical'; error: HostError }
  /** The return value is not JSON, or is larger than MAX_RESULT_BYTES. */
  | { kind: 'resultInvalid'; message: string };

export type InvokeOutcome = ({ ok: true; value: unknown } | { ok: false; failure: InvokeFailure }) & { usage: InvokeUsage };

/**
 * The pool refused an invocation without running it: as many are already waiting for a
 * worker as it queues (SandboxPoolOptions.maxQueue). Answered 503, retryable.
 */
export class SandboxBusyError extends Error {
  constructor() {
    super('every sandbox worker is busy and the queue is full');
    this.name = 'SandboxBusyError';
  }
}

/** The sandbox pool (runtime/authored/sandbox/). */
export interface AuthoredPool {
  invoke(req: InvokeRequest): Promise<InvokeOutcome>;
  /** Replaces every worker; in-flight invocations finish on the old ones. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** The largest return value an invocation may answer (serialized JSON bytes). */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * What an operation's invocation leaves for its evidence (the audit row
 * `stage: "authored"`, usage `authored.invocations`): set on the
 * OperationContext (`ctx.authored`) by the operation's executor before it
 * answers or throws, read by the evidence stage.
 */
export interface AuthoredInvocationRecord {
  handler: string;
  surface: HandlerSurface;
  /** The source bytes' sha256 the publication pinned (HandlerDef.sha256). */
  sha256: string;
  bundleSha256: string;
  /** `ok`, or the failure's kind; `outputInvalid`: the return value did not match `output`; `commitFailed`: the transaction did not commit. */
  outcome: 'ok' | InvokeFailure['kind'] | 'outputInvalid' | 'commitFailed';
  /** The failure as the sandbox reported it (a thrown error's stack goes only to the audit row). */
  failure?: InvokeFailure;
  usage: InvokeUsage;
}
