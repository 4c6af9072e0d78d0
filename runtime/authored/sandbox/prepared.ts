/**
 * Fresh sandboxes made ahead of their invocation. A runtime, its context and
 * the evaluated prelude cost about 1.2 ms of a no-op invocation's 1.5 ms
 * (docs/performance.md "Authored code"), and none of it depends on the
 * invocation: so once a worker has answered, it makes the next one while it
 * would otherwise wait for a task. Each sandbox still serves exactly one
 * invocation and is disposed after it (CONTRACT: a fresh sandbox per
 * invocation, nothing shared); only the moment it is made moves.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { engineFor, type Engine } from './engine.js';
import { PRELUDE } from './prelude.js';

/** QuickJS's own stack limit; well inside the engine's wasm stack, so overflow is QuickJS's error and never a wasm trap. */
export const STACK_BYTES = 256 * 1024;

/** The invocation a sandbox serves: its interrupt check and its host calls. */
export interface SandboxBinding {
  interrupt(): boolean;
  hostCall(vm: QuickJSContext, target: string, argsJson: string): QuickJSHandle;
}

export interface PreparedSandbox {
  readonly engine: Engine;
  readonly rt: QuickJSRuntime;
  readonly vm: QuickJSContext;
  /** The native `host` function the prelude's `ctx` calls through. */
  readonly host: QuickJSHandle;
  /** The prelude's function, not yet called: `(host, dataJson, inputJson) → run`. */
  readonly boot: QuickJSHandle;
  /** Set to the invocation while it runs; until then interrupts and host calls find nobody. */
  readonly holder: { current: SandboxBinding | null };
}

let ready: PreparedSandbox | null = null;
let preparing = false;

/** A new runtime and context on `engine` with the prelude evaluated. Throws if the engine fails (the caller discards it). */
export function prepareSandbox(engine: Engine): PreparedSandbox {
  const holder: { current: SandboxBinding | null } = { current: null };
  const rt = engine.module.newRuntime();
  try {
    rt.setMaxStackSize(STACK_BYTES);
    rt.setInterruptHandler(() => holder.current?.interrupt() ?? false);
    const vm = rt.newContext();
    const host = vm.newFunction('host', (t, a) => {
      if (holder.current === null) throw new Error('no invocation');
      return holder.current.hostCall(vm, vm.getString(t), vm.getString(a));
    });
    const boot = vm.evalCode(PRELUDE, 'plinth-prelude.js');
    if (boot.error !== undefined) {
      boot.error.dispose();
      host.dispose();
      vm.dispose();
      throw new Error('the sandbox prelude did not evaluate');
    }
    return { engine, rt, vm, host, boot: boot.value, holder };
  } catch (err) {
    try {
      rt.dispose();
    } catch {
      // the engine is broken; its module goes with the caller's discard
    }
    throw err;
  }
}

/** The sandbox made ahead for `engine`, or a new one now; one made for another engine (a cap, a replaced module) is dropped. */
export function takeSandbox(engine: Engine): PreparedSandbox {
  const r = ready;
  ready = null;
  if (r !== null) {
    if (r.engine === engine) return r;
    disposeSandbox(r);
  }
  return prepareSandbox(engine);
}

/** Frees a sandbox that served no invocation (the engine may be broken: then nothing more can be done). */
function disposeSandbox(s: PreparedSandbox): void {
  try {
    s.boot.dispose();
    s.host.dispose();
    s.vm.dispose();
    s.rt.dispose();
  } catch {
    // a broken engine; discarded by whoever broke it
  }
}

/** After an invocation: make the next sandbox of this cap once the thread has nothing else to do. */
export function prepareNext(memoryMiB: number): void {
  if (ready !== null || preparing) return;
  preparing = true;
  setImmediate(() => {
    engineFor(memoryMiB)
      .then((engine) => {
        if (ready === null) ready = prepareSandbox(engine);
      })
      .catch(() => {
        ready = null;
      })
      .finally(() => {
        preparing = false;
      });
  });
}
