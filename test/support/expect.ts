import assert from 'node:assert/strict';
import { errorOf, type Reply } from './client.js';

export type Json = Record<string, any>;

export function expectStatus(r: Reply, status: number): void {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
}

/** Asserts status, code, reason code and that the envelope's correlationId is the response header's. */
export function expectError(r: Reply, status: number, code: string, reasonCode: string, field?: string): Json {
  expectStatus(r, status);
  const e = errorOf(r);
  assert.equal(e.code, code);
  assert.equal(e.reasonCode, reasonCode);
  assert.equal(e.correlationId, r.headers.get('x-service-correlation-id'));
  if (field !== undefined) assert.equal(e.field, field);
  return e;
}
