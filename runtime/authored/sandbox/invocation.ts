/**
 * One invocation inside a worker: a fresh QuickJS runtime and context on the
 * engine of its memory cap, the prelude's `ctx`, the bundle, and a loop that
 * runs guest jobs until the handler's promise settles and every host call it
 * made is answered.
 *
 * Limits are enforced by the engine, never sampled from outside:
 * - CPU: `cpuMs` is the worker thread's CPU time during the invocation, read
 *   from Linux's per-thread clock (thread-cpu.ts); where there is none, the
 *   time the thread spent inside the engine (each evalCode/callFunction/
 *   executePendingJobs/resolve slice). The interrupt handler first adds up
 *   time inside the engine on the monotonic clock, which can only overstate
 *   CPU; once that passes the limit it asks the thread's CPU clock (at most
 *   once a millisecond) and stops the guest when that passes too. Measured:
 *   on two cores at load 12, the monotonic clock alone stopped a 50 ms loop at
 *   up to 66 ms, the time the thread sat descheduled counted as CPU.
 * - Wall clock: the same handler checks the deadline while guest code runs, and
 *   a timer ends the wait for host answers at the deadline.
 * - Memory: the engine's capped wasm memory (engine.ts); running out shows as
 *   QuickJS's InternalError "out of memory" or an engine abort.
 * - Usage: `peakMemoryBytes` is the engine heap's high-water (engine.ts
 *   highWater), at least this invocation's peak; see RECYCLE_BYTES.
 * - Stack: QuickJS's stack limit turns deep recursion into a RangeError-like
 *   InternalError "stack overflow", which is an ordinary throw.
 */
import { Buffer } from 'node:buffer';
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { MAX_RESULT_BYTES, type HostAnswer, type InvokeFailure, type InvokeOutcome } from '../types.js';
import { discard, engineFor, highWater, type Engine } from './engine.js';
import { prepareNext, takeSandbox, type PreparedSandbox } from './prepared.js';
import { HOST_CALL_LIMIT_ERROR, MAX_HOST_CALLS, MAX_HOST_CALLS_IN_FLIGHT, type AnswerMessage, type SandboxTask, type WorkerMessage } from './protocol.js';
import { refuseTarget } from './targets.js';
import { threadCpuMs } from './thread-cpu.js';

const MiB = 1024 * 1024;
/** The bundle's global (esbuild `iife`, `globalName`). */
const BUNDLE_GLOBAL = '__plinthHandler';
/**
 * A module whose heap high-water passed this is replaced after the invocation:
 * its memory goes back, and every invocation starts on a module below it, so
 * `peakMemoryBytes` above it is the invocation's own.
 */
const RECYCLE_BYTES = 16 * MiB;
/** A throw with the heap this close to the cap is the cap (QuickJS may throw `null` when even its error cannot be allocated). */
const NEAR_CAP_BYTES = MiB;

type Limit = 'cpu' | 'wall' | 'memory';
/** What the prelude's `run` settles with (prelude.ts `finish`/`describe`). */
type GuestOutcome =
  | { t: 'ok'; json: string }
  | { t: 'resultInvalid'; message: string }
  | { t: 'canonical'; error: Extract<InvokeFailure, { kind: 'canonical' }>['error'] }
  | { t: 'threw'; name?: string; message: string; stack?: string };

interface QueuedCall { id: number; target: string; args: unknown[] }

export async function runInvocation(task: SandboxTask): Promise<InvokeOutcome> {
  const engine = await engineFor(task.limits.memoryMiB);
  return new Invocation(task, engine).run();
}

class Invocation {
  /** Time inside the engine (the monotonic clock): an upper bound of the guest's CPU. */
  private engineMs = 0;
  private sliceStart = 0;
  private readonly threadCpuAtStart = threadCpuMs();
  private lastCpuCheck = 0;
  private hit: Limit | null = null;
  private readonly startedAt = performance.now();
  private readonly deadline: number;
  private expired = false;
  private calls = 0;
  private nextId = 1;
  /** Calls sent to the host and not yet answered (at most MAX_HOST_CALLS_IN_FLIGHT). */
  private posted = 0;
  private readonly queue: QueuedCall[] = [];
  private queueHead = 0;
  /** Every unanswered call: sent, queued, or refused here and answered on the next turn. */
  private readonly pending = new Map<number, { d: QuickJSDeferredPromise; posted: boolean }>();
  private readonly answers: AnswerMessage[] = [];
  private answersHead = 0;
  private wake: (() => void) | null = null;

  constructor(private readonly task: SandboxTask, private readonly engine: Engine) {
    this.deadline = this.startedAt + task.limits.wallMs;
  }

  async run(): Promise<InvokeOutcome> {
    const { port, limits } = this.task;
    port.on('message', (m: AnswerMessage) => {
      this.answers.push(m);
      this.wake?.();
    });
    const timer = setTimeout(() => {
      this.expired = true;
      this.wake?.();
    }, limits.wallMs);
    this.post({ kind: 'started' });
    let failure: InvokeFailure | null = null;
    let value: unknown = null;
    let broken = false;
    let sandbox: PreparedSandbox | null = null;
    try {
      // Made ahead while the worker was idle (prepared.ts), or now; either way used by this invocation only.
      sandbox = takeSandbox(this.engine);
      const { rt, vm } = sandbox;
      sandbox.holder.current = { interrupt: () => this.interrupt(), hostCall: (v, t, a) => this.hostCall(v, t, a) };
      rt.setMemoryLimit(limits.memoryMiB * MiB);
      try {
        const r = await this.execute(rt, vm, sandbox);
        if (r.ok) value = r.value;
        else failure = r.failure;
      } finally {
        for (const p of this.pending.values()) tryDispose(p.d);
        if (!tryDispose(vm)) broken = true;
      }
    } catch (err) {
      // A throw out of the engine itself (a wasm trap, an abort): the module is no longer trusted.
      broken = true;
      failure = this.hit !== null ? limitFailure(this.hit) : /memory|OOM/i.test(String(err)) ? { kind: 'memoryLimit' } : { kind: 'threw', message: 'the sandbox engine failed' };
    } finally {
      clearTimeout(timer);
      port.close();
      if (sandbox !== null) {
        sandbox.holder.current = null;
        if (!tryDispose(sandbox.rt)) broken = true;
      }
    }
    const peak = highWater(this.engine);
    if (failure?.kind === 'threw' && peak >= this.engine.memory.buffer.byteLength - NEAR_CAP_BYTES) failure = { kind: 'memoryLimit' };
    if (failure?.kind === 'memoryLimit' || peak > RECYCLE_BYTES) broken = true;
    if (broken) discard(this.engine.memoryMiB);
    prepareNext(limits.memoryMiB);
    const threadCpu = threadCpuMs();
    const cpuMs = this.threadCpuAtStart === null || threadCpu === null ? this.engineMs : threadCpu - this.threadCpuAtStart;
    const usage = { cpuMs: round(cpuMs), wallMs: round(performance.now() - this.startedAt), peakMemoryBytes: peak };
    return failure === null ? { ok: true, value, usage } : { ok: false, failure, usage };
  }

  private async execute(rt: QuickJSRuntime, vm: QuickJSContext, sandbox: PreparedSandbox): Promise<{ ok: true; value: unknown } | { ok: false; failure: InvokeFailure }> {
    const owned: QuickJSHandle[] = [];
    const own = (h: QuickJSHandle): QuickJSHandle => (owned.push(h), h);
    try {
      const host = own(sandbox.host);
      const boot = own(sandbox.boot);
      const runner = this.slice(() => vm.callFunction(boot, vm.undefined, host, own(vm.newString(JSON.stringify(this.task.ctx))), own(vm.newString(this.task.inputJson))));
      if (runner.error) return this.failed(vm, own(runner.error));
      own(runner.value);
      const bundle = this.slice(() => vm.evalCode(this.task.code, 'handler.js'));
      if (bundle.error) return this.failed(vm, own(bundle.error));
      own(bundle.value);
      const exports = own(vm.getProp(vm.global, BUNDLE_GLOBAL));
      const fn = vm.typeof(exports) === 'object' ? own(vm.getProp(exports, this.task.exportName)) : vm.undefined;
      if (vm.typeof(fn) !== 'function') return { ok: false, failure: { kind: 'threw', message: `the bundle has no function export "${this.task.exportName}"` } };
      const started = this.slice(() => vm.callFunction(runner.value, vm.undefined, fn));
      if (started.error) return this.failed(vm, own(started.error));
      const promise = own(started.value);

      let settled: GuestOutcome | null = null;
      for (;;) {
        this.deliverAnswers(vm);
        const jobs = this.slice(() => rt.executePendingJobs());
        if (jobs.error) return this.failed(vm, own(jobs.error));
        if (this.hit !== null) return { ok: false, failure: limitFailure(this.hit) };
        if (settled === null) {
          const state = vm.getPromiseState(promise);
          if (state.type === 'fulfilled') {
            own(state.value);
            settled = readOutcome(vm, state.value);
          } else if (state.type === 'rejected') {
            // `run` never rejects unless the engine stopped the guest inside its own handlers.
            return this.failed(vm, own(state.error));
          }
        }
        const idle = this.pending.size === 0;
        // Settled and every host call answered: done. Pending with nothing in flight: no timer or host call
        // can ever settle it (the sandbox has no timers), so it is the wall-clock limit now rather than later.
        if (idle) return settled === null ? { ok: false, failure: { kind: 'wallClockLimit' } } : fromGuest(settled);
        if (this.answersHead === this.answers.length) await this.nextAnswer();
        if (this.expired) return { ok: false, failure: { kind: 'wallClockLimit' } };
      }
    } finally {
      for (const h of owned) tryDispose(h);
    }
  }

  /** The native side of `host(target, argsJson)`: a QuickJS promise the loop settles when the host answers. */
  private hostCall(vm: QuickJSContext, target: string, argsJson: string): QuickJSHandle {
    const d = vm.newPromise();
    const id = this.nextId++;
    this.calls += 1;
    const refusal = this.calls > MAX_HOST_CALLS ? HOST_CALL_LIMIT_ERROR : refuseTarget(target, this.task.ctx.surface);
    if (refusal !== null) {
      // Answered on the loop's next turn, never re-entering the engine from inside this call.
      this.pending.set(id, { d, posted: false });
      this.answers.push({ id, answer: { ok: false, error: refusal } });
      return d.handle;
    }
    let args: unknown;
    try {
      args = JSON.parse(argsJson);
    } catch {
      args = [];
    }
    const call = { id, target, args: Array.isArray(args) ? args : [] };
    const send = this.posted < MAX_HOST_CALLS_IN_FLIGHT;
    this.pending.set(id, { d, posted: send });
    if (send) this.send(call);
    else this.queue.push(call);
    return d.handle;
  }

  private send(call: QueuedCall): void {
    this.posted += 1;
    this.post({ kind: 'call', ...call });
  }

  private deliverAnswers(vm: QuickJSContext): void {
    while (this.answersHead < this.answers.length) {
      const { id, answer } = this.answers[this.answersHead++]!;
      if (this.answersHead === this.answers.length) this.answers.length = this.answersHead = 0;
      const p = this.pending.get(id);
      if (p === undefined) continue;
      this.pending.delete(id);
      this.slice(() => {
        const json = vm.newString(JSON.stringify(answer satisfies HostAnswer));
        p.d.resolve(json);
        json.dispose();
      });
      if (!p.posted) continue;
      this.posted -= 1;
      // A slot freed: the oldest waiting call goes to the host.
      if (this.queueHead < this.queue.length) {
        const next = this.queue[this.queueHead++]!;
        if (this.queueHead === this.queue.length) this.queue.length = this.queueHead = 0;
        this.pending.get(next.id)!.posted = true;
        this.send(next);
      }
    }
  }

  private nextAnswer(): Promise<void> {
    if (this.expired) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
    });
  }

  private slice<T>(fn: () => T): T {
    this.sliceStart = performance.now();
    try {
      return fn();
    } finally {
      this.engineMs += performance.now() - this.sliceStart;
    }
  }

  private interrupt(): boolean {
    if (this.hit !== null) return true;
    const now = performance.now();
    if (now > this.deadline) this.hit = 'wall';
    else if (this.engineMs + (now - this.sliceStart) > this.task.limits.cpuMs && now - this.lastCpuCheck >= 1) {
      this.lastCpuCheck = now;
      if (this.cpuUsed(now) > this.task.limits.cpuMs) this.hit = 'cpu';
    }
    return this.hit !== null;
  }

  /** CPU used so far: the thread's clock, or time inside the engine where there is none. */
  private cpuUsed(now: number): number {
    const cpu = this.threadCpuAtStart === null ? null : threadCpuMs();
    if (cpu === null || this.threadCpuAtStart === null) return this.engineMs + (this.sliceStart > 0 && now > this.sliceStart ? now - this.sliceStart : 0);
    return cpu - this.threadCpuAtStart;
  }

  /** An exception out of a guest slice: a limit the engine enforced, or a throw. */
  private failed(vm: QuickJSContext, error: QuickJSHandle): { ok: false; failure: InvokeFailure } {
    if (this.hit !== null) return { ok: false, failure: limitFailure(this.hit) };
    const d: unknown = vm.dump(error);
    if (isOutOfMemory(d)) return { ok: false, failure: { kind: 'memoryLimit' } };
    if (d !== null && typeof d === 'object' && 'message' in d) {
      const e = d as { message: unknown; stack?: unknown };
      return { ok: false, failure: { kind: 'threw', message: String(e.message), ...(typeof e.stack === 'string' ? { stack: e.stack.slice(0, 4096) } : {}) } };
    }
    return { ok: false, failure: { kind: 'threw', message: String(d) } };
  }

  private post(m: WorkerMessage): void {
    this.task.port.postMessage(m);
  }
}

function readOutcome(vm: QuickJSContext, h: QuickJSHandle): GuestOutcome {
  const t = vm.getProp(h, 't');
  const tag = vm.getString(t);
  t.dispose();
  if (tag === 'ok') {
    const j = vm.getProp(h, 'json');
    const json = vm.getString(j);
    j.dispose();
    return { t: 'ok', json };
  }
  return vm.dump(h) as GuestOutcome;
}

function fromGuest(o: GuestOutcome): { ok: true; value: unknown } | { ok: false; failure: InvokeFailure } {
  switch (o.t) {
    case 'ok':
      if (Buffer.byteLength(o.json) > MAX_RESULT_BYTES) return { ok: false, failure: { kind: 'resultInvalid', message: `the return value is larger than ${MAX_RESULT_BYTES} bytes` } };
      return { ok: true, value: JSON.parse(o.json) };
    case 'resultInvalid':
      return { ok: false, failure: { kind: 'resultInvalid', message: o.message } };
    case 'canonical':
      return { ok: false, failure: { kind: 'canonical', error: o.error } };
    case 'threw':
      if (isOutOfMemory(o)) return { ok: false, failure: { kind: 'memoryLimit' } };
      return { ok: false, failure: { kind: 'threw', message: o.message, ...(o.stack === undefined ? {} : { stack: o.stack }) } };
  }
}

/** QuickJS reports an exhausted heap as InternalError "out of memory" (the handler may have caught and rethrown it: still the limit). */
function isOutOfMemory(d: unknown): boolean {
  return d !== null && typeof d === 'object' && (d as { name?: unknown }).name === 'InternalError' && (d as { message?: unknown }).message === 'out of memory';
}

function limitFailure(hit: Limit): InvokeFailure {
  return hit === 'cpu' ? { kind: 'cpuLimit' } : hit === 'wall' ? { kind: 'wallClockLimit' } : { kind: 'memoryLimit' };
}

function tryDispose(d: { alive: boolean; dispose(): void }): boolean {
  try {
    if (d.alive) d.dispose();
    return true;
  } catch {
    return false;
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
