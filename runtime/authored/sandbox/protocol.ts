/**
 * What crosses the thread boundary between the pool (main thread) and a
 * sandbox worker. Everything here is structured-clone safe.
 */
import type { HandlerLimits, HostAnswer, HostError, InvokeOutcome, SandboxContext } from '../types.js';
import type { MessagePort } from 'node:worker_threads';

/** One invocation as the worker receives it (`port` travels in the transfer list). */
export interface SandboxTask {
  code: string;
  exportName: string;
  /** The input as JSON text: parsed inside the sandbox, so the host never hands it a live object. */
  inputJson: string;
  ctx: SandboxContext;
  limits: HandlerLimits;
  port: MessagePort;
}

/** Worker → pool: the invocation started running (arms the main-thread backstop), or a host call. */
export type WorkerMessage = { kind: 'started' } | { kind: 'call'; id: number; target: string; args: unknown[] };

/** Pool → worker: the host's answer to call `id`. */
export interface AnswerMessage {
  id: number;
  answer: HostAnswer;
}

export type SandboxResult = InvokeOutcome;

/** At most this many host calls of one invocation wait on the host at once; later ones wait in the worker's queue. */
export const MAX_HOST_CALLS_IN_FLIGHT = 16;

/**
 * At most this many host calls per invocation; the next one rejects inside the
 * handler with QUOTA_EXCEEDED `Handler.HostCallLimit` (the spec's code for an
 * exhausted limit, 429), catchable like any host refusal.
 */
export const MAX_HOST_CALLS = 10_000;

export const HOST_CALL_LIMIT_ERROR: HostError = {
  code: 'QUOTA_EXCEEDED', reasonCode: 'Handler.HostCallLimit', status: 429,
  message: `an invocation may make at most ${MAX_HOST_CALLS} host calls`,
};
