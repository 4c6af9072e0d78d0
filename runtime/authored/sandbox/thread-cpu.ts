/**
 * This thread's CPU time, where Linux tells it: Node 20 has no per-thread CPU
 * clock (`process.cpuUsage()` is the whole process), but
 * `/proc/thread-self/schedstat` starts with the thread's time on a CPU in
 * nanoseconds; the file is opened once, by the worker thread itself (the link
 * resolves to the thread that opens it), and one read costs ~2.5 µs.
 * Elsewhere (no procfs) it answers null and the sandbox counts time spent
 * inside the engine instead (invocation.ts).
 */
import { openSync, readSync } from 'node:fs';

const buf = Buffer.alloc(64);
let fd: number | null = null;
try {
  fd = openSync('/proc/thread-self/schedstat', 'r');
} catch {
  fd = null;
}

export function threadCpuMs(): number | null {
  if (fd === null) return null;
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const end = buf.indexOf(0x20);
    const ns = Number(buf.toString('latin1', 0, end > 0 && end < n ? end : n));
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}
