/**
 * Helpers of the sandbox suites: bundles built the way publish builds them
 * (esbuild `iife`, globalName `__plinthHandler`) and a HostBridge the test
 * answers, recording every call.
 */
import { transformSync } from 'esbuild';
import type { HandlerLimits, HandlerSurface, HostAnswer, HostBridge, HostCall, InvokeRequest, SandboxContext } from '../../runtime/authored/types.js';

/** A handler module's source → the bundle the pool runs. */
export function bundle(source: string): string {
  return transformSync(source, { format: 'iife', globalName: '__plinthHandler', loader: 'js', target: 'es2022' }).code;
}

export class TestHost implements HostBridge {
  readonly calls: HostCall[] = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor(private readonly answer: (call: HostCall) => HostAnswer | Promise<HostAnswer> = (c) => ({ ok: true, value: { echo: c } })) {}
  async call(call: HostCall): Promise<HostAnswer> {
    this.calls.push(call);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.answer(call);
    } finally {
      this.inFlight -= 1;
    }
  }
}

export const LIMITS: HandlerLimits = { cpuMs: 1_000, wallMs: 10_000, memoryMiB: 64 };

export function context(surface: HandlerSurface = 'CoreHandler', more: Partial<SandboxContext> = {}): SandboxContext {
  return { surface, actor: { subjectId: 'u1', roles: ['member'], claims: { tier: 'gold' } }, correlationId: 'corr-1', publicationVersion: 7, ...more };
}

export function request(source: string, opts: { input?: unknown; host?: HostBridge; limits?: Partial<HandlerLimits>; ctx?: SandboxContext; exportName?: string } = {}): InvokeRequest {
  return {
    code: bundle(source), codeId: 'test', exportName: opts.exportName ?? 'default', input: opts.input ?? null,
    ctx: opts.ctx ?? context(), limits: { ...LIMITS, ...opts.limits }, host: opts.host ?? new TestHost(),
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
}
