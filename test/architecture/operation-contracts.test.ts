/**
 * One declaration per operation (issue 23; docs/architecture.md "Declaring an operation"):
 * every route the REST adapter serves belongs to an operation with a contract, and what
 * is derived from the contracts (the route table, the OpenAPI paths, the CLI commands,
 * the answer check) is complete and consistent. No server: these are properties of the
 * declarations themselves.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { STATIC_ROUTES } from '../../adapters/rest/routes.js';
import { PLATFORM_OPERATIONS } from '../../runtime/operations/catalog.js';
import { answerMismatch, declaredCommands, declaredOpenApi, openApiPathOf, operationIdOf } from '../../runtime/operations/contract/index.js';
import { BRANCH_SPECS } from '../../runtime/operations/control/branches.js';
import { buildOpenApiDocument } from '../../runtime/publication/openapi.js';
import { EMPTY_MODEL } from '../../runtime/publication/model.js';
import { assertValidOpenApi } from '../support/openapi-doc.js';

it('every route of the REST table belongs to a declared operation', () => {
  const undeclared = STATIC_ROUTES.filter((r) => r.spec.contract === undefined).map((r) => `${r.method} ${r.path} (${r.spec.id})`);
  assert.deepEqual(undeclared, []);
});

it('the route table is exactly the declared routes', () => {
  // A WebSocket upgrade (Realtime.Connect) is declared and documented, but served by the realtime adapter, not the table.
  const declared = PLATFORM_OPERATIONS.filter((op) => op.contract.output.upgrade !== true).flatMap((op) => op.contract.routes.map((r) => `${r.method} ${r.path}`)).sort();
  assert.deepEqual(STATIC_ROUTES.map((r) => `${r.method} ${r.path}`).sort(), declared);
});

it('each operation is declared once, and describes every path parameter of its routes', () => {
  const ids = PLATFORM_OPERATIONS.map((op) => op.id);
  assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');
  for (const op of PLATFORM_OPERATIONS) {
    for (const r of op.contract.routes) {
      for (const [, name] of r.path.matchAll(/:(\w+)/g)) {
        assert.ok(op.contract.params?.[name!]?.description, `${op.id}: ${r.method} ${r.path} describes :${name}`);
      }
    }
    assert.ok(op.contract.summary.length > 0, `${op.id}: summary`);
    assert.ok(op.contract.metering.unit !== 'none' || op.contract.metering.why.length > 0, `${op.id}: says why it is unmetered`);
  }
});

it('the OpenAPI document has every declared route under its operation id, and still validates', async () => {
  const doc = buildOpenApiDocument({
    model: EMPTY_MODEL, publicationVersion: 1, tenantSlug: 'acme', projectSlug: 'shop', basePath: '/api', platform: declaredOpenApi(PLATFORM_OPERATIONS),
  }) as { paths: Record<string, Record<string, { operationId: string }>> };
  const seen = new Set<string>();
  for (const op of PLATFORM_OPERATIONS) {
    op.contract.routes.forEach((r, i) => {
      const documented = doc.paths[openApiPathOf(r.path)]?.[r.method.toLowerCase()];
      assert.equal(documented?.operationId, operationIdOf(op, r, i), `${r.method} ${r.path}`);
      assert.ok(!seen.has(documented!.operationId), `operationId ${documented!.operationId} is unique`);
      seen.add(documented!.operationId);
    });
  }
  await assertValidOpenApi(doc);
});

it('the CLI descriptor has one command per declared operation, with unique names', () => {
  const commands = declaredCommands(PLATFORM_OPERATIONS, '/api');
  const names = commands.map((c) => c.name);
  assert.equal(new Set(names).size, names.length);
  const create = commands.find((c) => c.operationId === 'ControlPlane.Branch.Create')!;
  assert.deepEqual(create.flags, [{ name: 'name', type: 'string', required: true }, { name: 'base', type: 'string', required: false }]);
});

it('the answer check refuses what a contract does not describe, and passes what it does', () => {
  const contract = BRANCH_SPECS.create.contract;
  const branch = {
    id: '0b6f6a55-5f0c-4c55-9f55-6b2f0f1c2d3e', name: 'dev', base: 'main', head: { publicationVersion: 1 },
    protection: { requireProposal: false, requiredApprovals: 0 }, createdAt: '2026-11-28T00:00:00.000Z',
  };
  const answer = { surface: 'Branch', state: 'created', correlationId: 'c', data: branch };
  assert.equal(answerMismatch(contract, 201, answer), null);
  assert.match(answerMismatch(contract, 201, { ...answer, state: 'deleted' }) ?? '', /state/);
  assert.match(answerMismatch(contract, 201, { ...answer, data: { ...branch, name: undefined } }) ?? '', /name/);
  assert.match(answerMismatch(contract, 200, answer) ?? '', /status 200, declared 201/);
  // Errors carry the shared envelope, not the success schema.
  assert.equal(answerMismatch(contract, 422, { error: {} }), null);
});
