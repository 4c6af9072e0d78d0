import { isTransientJetStreamError } from './js-retry.js';

/**
 * One deadline for every NATS/JetStream setup call of a node's boot. A node
 * may start while a JetStream leader is being elected (2–7 s on nats-server
 * 2.9) or while one server is down; it waits that out as it does at run
 * time, and gives up only when the whole setup has not finished in time.
 */
export class StartupDeadline {
  private readonly at: number;

  constructor(
    readonly totalMs: number,
    /** The setting that sets it, named in the failure message. */
    readonly setting: string,
  ) {
    this.at = Date.now() + totalMs;
  }

  get remainingMs(): number {
    return Math.max(0, this.at - Date.now());
  }
}

/** A setup step still failed when the startup deadline passed (or failed in a way no retry fixes). */
export class StartupStepFailed extends Error {
  constructor(
    readonly step: string,
    deadline: StartupDeadline,
    cause: unknown,
    timedOut: boolean,
  ) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      timedOut
        ? `cluster setup failed: ${step} did not succeed within ${deadline.totalMs} ms (${deadline.setting}); last error: ${why}`
        : `cluster setup failed: ${step}: ${why}`,
      { cause },
    );
    this.name = 'StartupStepFailed';
  }
}

export interface StartupStepOptions {
  /** Which errors are worth another attempt. Default: the transient JetStream errors of js-retry.ts. */
  transient?: (err: unknown) => boolean;
  /** Called once per step, on its first failed attempt (to log that the node is waiting). */
  onRetry?: (err: unknown) => void;
}

const NO_ANSWER = Symbol('no answer');

/** Below this much time left no attempt is started. */
const LAST_ATTEMPT_MS = 50;

/**
 * Runs one setup step until it succeeds: transient failures are retried with
 * backoff (100 ms doubling to 1 s) until the deadline. Each attempt is told
 * the time left (its own retries stay inside it) and is abandoned when the
 * deadline passes, so a hung call cannot outlast it.
 */
export async function startupStep<T>(step: string, deadline: StartupDeadline, attempt: (remainingMs: number) => Promise<T>, opts: StartupStepOptions = {}): Promise<T> {
  const transient = opts.transient ?? isTransientJetStreamError;
  let delay = 100;
  let warned = false;
  for (;;) {
    const remaining = deadline.remainingMs;
    let timer: NodeJS.Timeout | undefined;
    let result: T | typeof NO_ANSWER;
    try {
      const run = attempt(remaining);
      run.catch(() => {}); // abandoned at the deadline: its late failure is not unhandled
      result = await Promise.race([run, new Promise<typeof NO_ANSWER>((resolve) => (timer = setTimeout(resolve, remaining, NO_ANSWER)))]);
    } catch (err) {
      if (!transient(err)) throw new StartupStepFailed(step, deadline, err, false);
      // Retry until the deadline itself: the last wait is cut to what is left, so a boot gives NATS the whole
      // NATS_STARTUP_DEADLINE_MS; with less than a moment left, the last error is the answer.
      if (deadline.remainingMs < LAST_ATTEMPT_MS) throw new StartupStepFailed(step, deadline, err, true);
      if (!warned) opts.onRetry?.(err);
      warned = true;
      await new Promise((r) => setTimeout(r, Math.min(delay, deadline.remainingMs - LAST_ATTEMPT_MS / 2)));
      delay = Math.min(delay * 2, 1_000);
      continue;
    } finally {
      clearTimeout(timer);
    }
    if (result === NO_ANSWER) throw new StartupStepFailed(step, deadline, new Error('no answer'), true);
    return result;
  }
}
