/**
 * The QuickJS engines of one worker thread: one wasm module per memory cap,
 * each instantiated on its own `WebAssembly.Memory` whose `maximum` is the cap.
 * That memory is the hard limit: QuickJS's own `setMemoryLimit` is not one in
 * this build (it cannot see most allocation sizes, ENVIRONMENT.md), so it is
 * only set as an early, soft signal. A module whose invocation ran out of
 * memory or aborted is thrown away and the next invocation gets a new one.
 *
 * The SYNC release variant: the asyncify one corrupts its state on two awaited
 * host calls; host calls here return QuickJS promises settled by the worker.
 *
 * Measured: QuickJS sometimes fails its own teardown check (`list_empty(&rt->
 * gc_obj_list)` in JS_FreeRuntime) after a promise job built a multi-MiB
 * string; the outcome is already known then, and the module is discarded like
 * any other abort (invocation.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC, type CustomizeVariantOptions, type QuickJSWASMModule } from 'quickjs-emscripten';

const MiB = 1024 * 1024;
const WASM_PAGE = 64 * 1024;
/** The module's own minimum memory (its static data, stack and first heap): 256 pages, 16 MiB. */
const MIN_PAGES = 256;
/** Modules kept per worker: the surfaces' two defaults plus two custom caps; the least recently used goes first. */
const MAX_MODULES = 4;

export interface Engine {
  readonly module: QuickJSWASMModule;
  readonly memory: WebAssembly.Memory;
  readonly memoryMiB: number;
}

// Compiled once per thread; instantiating it again (a new cap, a discarded module) costs ~6 ms, compiling ~4 ms more.
const require = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten'));
const wasm = new WebAssembly.Module(readFileSync(require.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')));

// Insertion order is recency: a use moves the cap to the end.
const engines = new Map<number, Promise<Engine>>();

/** Pages of the engine's memory for a cap: the whole wasm memory (heap, engine stack, static data) stays within it, never below the module's minimum. */
export function pagesFor(memoryMiB: number): number {
  return Math.max(MIN_PAGES, Math.floor((memoryMiB * MiB) / WASM_PAGE));
}

async function create(memoryMiB: number): Promise<Engine> {
  // Never grown: quickjs-emscripten 0.32 keeps typed-array views of the heap across engine calls (newPromise,
  // executePendingJobs), and a growth in between detaches them (measured: "Cannot perform %TypedArray%.prototype.values
  // on a detached ArrayBuffer" at the 1,700th pending host call). Untouched pages cost no resident memory.
  const pages = pagesFor(memoryMiB);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  // The engine's own stderr lines ("Aborted(...)") would reach the node's log unstructured; an abort is seen as the exception it throws.
  const quiet = { print: () => {}, printErr: () => {} } as unknown as NonNullable<CustomizeVariantOptions['emscriptenModule']>;
  const module = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmModule: wasm, wasmMemory: memory, emscriptenModule: quiet }));
  return { module, memory, memoryMiB };
}

export function engineFor(memoryMiB: number): Promise<Engine> {
  let e = engines.get(memoryMiB);
  if (e === undefined) {
    e = create(memoryMiB);
    e.catch(() => { if (engines.get(memoryMiB) === e) engines.delete(memoryMiB); });
    if (engines.size >= MAX_MODULES) engines.delete(engines.keys().next().value as number);
  } else {
    engines.delete(memoryMiB);
  }
  engines.set(memoryMiB, e);
  return e;
}

/** Zero pages in a row above the last written one that end highWater's scan: 1 MiB. */
const ZERO_RUN_PAGES = 256;
/** The same for an engine's first scan, from address 0: 8 MiB, more than the engine stack below the heap (5 MiB, its unused part zero). */
const FIRST_ZERO_RUN_PAGES = 2048;
/** Each engine's high-water so far (bytes): memory is never zeroed again, so it only rises. */
const marks = new WeakMap<Engine, number>();

/**
 * The highest heap address the module has written, to 4 KiB: the memory
 * starts zeroed and QuickJS's allocator (emscripten's dlmalloc over sbrk)
 * takes the heap from the bottom up, contiguously, so the written part ends
 * where a long run of zero pages begins. A page counts as written when its
 * first or last word is non-zero.
 *
 * The scan starts at this engine's previous answer (memory written stays
 * written: the mark only rises) and goes up until ZERO_RUN_PAGES zero pages in
 * a row: a few hundred reads per invocation, where scanning the whole cap from
 * the top took ~0.6 ms at 128 MiB (and ~1 s the first time: every page read
 * faults). The first scan starts at 0 and bridges the engine stack's zero
 * pages (FIRST_ZERO_RUN_PAGES). Not seen: memory a handler zero-filled at the
 * top (an ArrayBuffer), or written above a zero-filled run of 1 MiB or more.
 */
export function highWater(engine: Engine): number {
  const words = new BigUint64Array(engine.memory.buffer);
  const step = 4096 / 8;
  const mark = marks.get(engine);
  const run = mark === undefined ? FIRST_ZERO_RUN_PAGES : ZERO_RUN_PAGES;
  let top = mark ?? 0;
  for (let i = top / 8, zeros = 0; i + step <= words.length && zeros < run; i += step) {
    if (words[i] !== 0n || words[i + step - 1] !== 0n) {
      top = (i + step) * 8;
      zeros = 0;
    } else {
      zeros++;
    }
  }
  marks.set(engine, top);
  return top;
}

/** Forgets the module of a cap (out of memory, aborted): the next invocation gets a new one, and the old memory goes with its last reference. */
export function discard(memoryMiB: number): void {
  engines.delete(memoryMiB);
}
