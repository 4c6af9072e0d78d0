/**
 * The stability stage on its own (runtime/pipeline/binding-stability.ts): keyed
 * by the binding the invocation resolves to, so a protocol with no adapter
 * code for it (gRPC) is covered; verdicts are compiled once per project.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bindingStability } from '../../runtime/pipeline/binding-stability.js';
import { ServiceError } from '../../runtime/errors/service-error.js';
import { BindingStabilityCache, verdictOf } from '../../runtime/versioning/stability-cache.js';
import type { StabilityRecord } from '../../runtime/versioning/stability-store.js';
import type { OperationContext, Protocol } from '../../runtime/operations/types.js';
import type { SqlExecutor } from '../../storage/index.js';

const announced = (bindingId: string, stability: StabilityRecord['stability']): StabilityRecord => ({
  bindingId, stability, replacement: '/api/v2/orders', sunsetAt: '2031-01-01T00:00:00.000Z', announcedAt: '2026-01-01T00:00:00.000Z',
});

function cacheOver(rows: StabilityRecord[]): { cache: BindingStabilityCache; loads: () => number } {
  let loads = 0;
  const db = { query: async () => { loads++; return { rows }; } } as unknown as SqlExecutor;
  return { cache: new BindingStabilityCache(db), loads: () => loads };
}

const ctxOf = (cache: BindingStabilityCache, protocol: Protocol, operationId: string): OperationContext =>
  ({ services: { stability: cache }, scope: { project: { id: 'p' } }, inv: { protocol }, operationId }) as unknown as OperationContext;

async function verdict(ctx: OperationContext): Promise<unknown> {
  try {
    return await bindingStability(ctx);
  } catch (err) {
    return err;
  }
}

describe('binding stability stage', () => {
  it('a retired gRPC binding fails closed; the REST twin of the same operation serves', async () => {
    const { cache } = cacheOver([announced('grpc:Entity.Order.Read', 'Retired')]);
    const refused = await verdict(ctxOf(cache, 'grpc', 'Entity.Order.Read'));
    assert.ok(refused instanceof ServiceError);
    assert.deepEqual([refused.code, refused.reasonCode], ['NOT_FOUND', 'ExposureBinding.Retired']);
    assert.equal(await verdict(ctxOf(cache, 'rest', 'Entity.Order.Read')), null);
    assert.equal(await verdict(ctxOf(cache, 'grpc', 'Entity.Order.List')), null);
  });

  it('compiles once per project: later calls are synchronous map hits', async () => {
    const { cache, loads } = cacheOver([announced('rest:Entity.Order.List', 'Deprecated'), announced('rest:Entity.Order.Count', 'Beta')]);
    const ctx = ctxOf(cache, 'rest', 'Entity.Order.List');
    const first = await verdict(ctx);
    const second = bindingStability(ctx);
    assert.ok(!(second instanceof Promise), 'a hit does not wait');
    assert.deepEqual(second, first);
    assert.deepEqual(second, { Deprecation: `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`, Sunset: 'Wed, 01 Jan 2031 00:00:00 GMT', Link: '</api/v2/orders>; rel="successor-version"' });
    assert.equal(bindingStability(ctxOf(cache, 'rest', 'Entity.Order.Count')), null, 'Beta adds nothing at dispatch');
    assert.equal(loads(), 1);
    cache.invalidate('p');
    await verdict(ctx);
    assert.equal(loads(), 2, 'an invalidation reloads');
  });

  it('verdicts: Retired and Deprecated only; no Sunset header without a sunset', () => {
    assert.deepEqual(verdictOf(announced('x', 'Retired')), { retired: true });
    assert.equal(verdictOf(announced('x', 'Experimental')), null);
    const noSunset = verdictOf({ ...announced('x', 'Deprecated'), sunsetAt: null });
    assert.ok(noSunset !== null && !noSunset.retired && !('Sunset' in noSunset.headers));
  });
});
