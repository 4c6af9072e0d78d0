/**
 * Issue 23 part 3: the Explainability surface list follows from the
 * protocols (gRPC was left out), and every capability surface kind the
 * platform emits (`GET /api/Explainability/surface`) is one of the spec's
 * closed list, with the spec's ordinal (an exposure binding's `surfaceKind`
 * is typed to that list: runtime/publication/surface-kinds.ts).
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootstrapProject, defineEntity, type Client } from '../support/client.js';
import { expectStatus } from '../support/expect.js';
import { controlData } from './support.js';
import { forEachBackend, startServer, type Backend, type TestServer } from '../support/server.js';

/** The spec's sentence (Resources: capability surface kinds), verbatim. */
const SPEC_SENTENCE = '**Capability surface kinds (ordinal):** Substrate 1-9: GovernedConnectionAdapter 1, DatabaseInfrastructure 2, RuntimeSubstrate 3, Distribution 4, AnalyticsSubstrate 5, StorageInfrastructure 6, CacheInfrastructure 7, ModelInferenceAdapter 8, SecretProviderSurface 9. Projection 20-29: WireSurface 20, OperationProjectionSurface 21, SdkSurface 22, CommandSurface 23, ToolSurface 24, UiProjectionSurface 25. Operational 40-59: EventVocabularySurface 40, SubscriptionSurface 41, WebhookSurface 42, RealtimeSurface 43, SchedulingHandlerSurface 44, TriggerSurface 45, WorkflowSurface 46, AutomationActionSurface 47, AgentSkillSurface 48, EmailTransportSurface 49, SmsTransportSurface 50, DistributionPublicationSurface 51. Knowledge 60-79: SourceAssetSurface 60, AnalyticsSurface 61. Governance 80-99: IdentityProviderSurface 80, AuthSchemeSurface 81, BillingMeterSurface 82, GovernancePolicySurface 83. Execution 100-119: AuthoredRuntimeSurface 100, SandboxSurface 101. Cross-cutting 120-139: ObservabilitySurface 120, ExplainabilitySurface 121. The set of kinds is closed; projects cannot add kinds.';
const SPEC_KINDS = new Map([...SPEC_SENTENCE.matchAll(/([A-Z][A-Za-z]+) (\d+)[,.]/g)].map((m) => [m[1]!, Number(m[2])]));

it('the quoted sentence is the spec\'s, where the spec sits beside the repository', () => {
  assert.equal(SPEC_KINDS.size, 37);
  // dist/test/control/ → the repository root → ../shared/spec (the workspace layout; a bare checkout has no spec to compare).
  const spec = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'shared', 'spec', 'platform-spec.md');
  if (existsSync(spec)) assert.ok(readFileSync(spec, 'utf8').includes(SPEC_SENTENCE), 'the spec changed its surface kinds: update this sentence and runtime/publication/surface-kinds.ts');
});

forEachBackend('capability surface kinds', (backend: Backend) => {
  let server: TestServer;
  let admin: Client;

  before(async () => {
    server = await startServer({ backend, env: { GRPC_PORT: '0' } });
    admin = (await bootstrapProject(server.url, server.adminToken)).client;
    await defineEntity(admin, { entityName: 'Order', fields: [{ name: 'status', type: 'String', nullable: false }] });
  });
  after(async () => {
    await server?.close();
  });

  it('Explainability lists a surface for every protocol, gRPC with its bindings, and only spec kinds with spec ordinals', async () => {
    const r = await admin.get('/api/Explainability/surface');
    expectStatus(r, 200);
    const surfaces = r.body.data.surfaces as Array<{ surfaceKind: string; ordinal: number; surfaceName: string; enabled: boolean; bindingCount?: number }>;
    const protocols = controlData(await admin.get('/api/ExecutionCapabilityMatrix/matrix'), 200).protocols as string[];
    assert.ok(protocols.includes('grpc'));
    for (const p of protocols) assert.ok(surfaces.some((s) => s.surfaceName === p), `no surface for protocol ${p}`);
    const descriptor = await admin.get('/api/ContractProjection/descriptor');
    expectStatus(descriptor, 200);
    const bindings = descriptor.body.bindings as Array<{ bindingId: string; protocolKind: string }>;
    const grpcSurface = surfaces.find((s) => s.surfaceName === 'grpc')!;
    assert.deepEqual([grpcSurface.surfaceKind, grpcSurface.enabled], ['WireSurface', true]);
    assert.equal(grpcSurface.bindingCount, bindings.filter((b) => b.protocolKind === 'Grpc').length);
    assert.equal(grpcSurface.bindingCount, 8, 'the eight methods of OrderService');
    for (const s of surfaces) assert.equal(SPEC_KINDS.get(s.surfaceKind), s.ordinal, `${s.surfaceName}: ${s.surfaceKind} ${s.ordinal}`);
    assert.deepEqual(surfaces.map((s) => s.ordinal), surfaces.map((s) => s.ordinal).sort((a, b) => a - b), 'in ordinal order');
  });
});
