import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ActorSystem, SchedulerDriver } from '../actors/index.js';
import { projectActor } from '../actors/project/index.js';
import { RetentionDriver } from '../actors/retention/index.js';
import { UsageRollupDriver } from '../actors/usage/index.js';
import { SchemaRecoveryDriver } from '../actors/schema-recoverer/index.js';
import { DispatcherDriver } from '../actors/index.js';
import { ScheduledJobWorker } from '../runtime/scheduling/worker.js';
import { schemaRecoveryAtStartSkipped } from '../runtime/control/schema-crash-hook.js';
import { DeploymentRecovery } from '../runtime/deployments/deployment-recovery.js';
import { driverLease } from '../runtime/deployments/deployment-lease.js';
import { tenantActor } from '../actors/tenant/index.js';
import { startHttpServer, type HttpServer } from '../adapters/rest/server.js';
import { startGrpcServer, type GrpcServer } from '../adapters/grpc/server.js';
import { route } from '../adapters/rest/router.js';
import { STATIC_ROUTES } from '../adapters/rest/routes.js';
import { PLATFORM_OPERATIONS } from '../runtime/operations/catalog.js';
import { InProcessTransport } from '../cluster/in-process-transport.js';
import { CachedScopeDirectory } from '../runtime/control/scope-directory.js';
import { OutboxProcessor } from '../runtime/events/outbox-processor.js';
import { SecretStore } from '../runtime/secrets/index.js';
import { WebhookDispatcher } from '../runtime/webhooks/outbound/dispatcher.js';
import {
  JwtTokenVerifier,
  SqlGrantSource,
  defaultHashConcurrency,
  passwordHashGate,
  DEFAULT_HASH_COST,
  defaultPasswordHashQueue,
  setPasswordHashCost,
  LoginThrottle,
  ApiKeyVerifier,
} from '../runtime/identity/index.js';
import { createLogger, type Logger } from '../runtime/log.js';
import { BufferedAuditWriter } from '../runtime/pipeline/audit-writer.js';
import { BufferedUsageWriter } from '../runtime/usage/usage-writer.js';
import { PublicationRegistry } from '../runtime/publication/registry.js';
import type { EventTailSource } from '../runtime/events/event-tail.js';
import { SqlEventTail } from '../runtime/events/event-tail.js';
import { RealtimeHub } from '../runtime/realtime/hub.js';
import { pageQueueFor } from '../runtime/streams/page-queue.js';
import { StreamSlots, type LongLivedStreams } from '../runtime/streams/stream-slots.js';
import { retentionRules } from '../runtime/retention/rules.js';
import { ClusterRealtimeUsage } from '../cluster/realtime-usage.js';
import type { GovernanceSource, GrantSource, OutboxKicker, PublicationSource, QuotaEnforcer, ScopeDirectory, Services } from '../runtime/services.js';
import { ALWAYS_TRUSTED } from '../runtime/cache/cache-trust.js';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../storage/index.js';
import { loadAdminToken, type AdminToken } from './admin-token.js';
import { isInMemory, type NodeConfig } from './config.js';
import { clusterOutbox, connectClusterParts, setUpJetStream, startupDeadline, type ClusterParts } from './cluster-mode.js';
import type { StartupDeadline } from '../cluster/startup.js';
import { broadcastApiKeyRevocations, broadcastGovernance, broadcastInvalidations, broadcastQuotas, broadcastStability } from './cluster-invalidation.js';
import { BindingStabilityCache, type BindingStabilitySource } from '../runtime/versioning/stability-cache.js';
import { QuotaLedger } from '../runtime/quota/ledger.js';
import { quotaCapsOf } from '../runtime/quota/caps.js';
import { GovernanceCache } from '../runtime/governance/cache.js';
import { apiKeyOwner, sessionConnections } from '../runtime/realtime/session-connections.js';
import { ActorControlPlane } from './actor-gateway.js';
import { NodeState } from './node-state.js';
import { secureDataDir } from './data-dir.js';
import { createSandboxPool } from '../runtime/authored/sandbox/index.js';

export interface RunningNode {
  url: string;
  port: number;
  /** The port the gRPC server is bound to (GRPC_PORT, or the one picked for 0). */
  grpcPort: number;
  admin: AdminToken;
  storage: string;
  log: Logger;
  /** The runtime services, for diagnostics and tests (audit flush, direct SQL checks). */
  services: Services;
  /** The retention sweepers' driver (tests and operators: sweepNow()). */
  retention: RetentionDriver;
  /** The scheduling dispatcher's driver (tests and operators: reapNow()). */
  dispatcher: DispatcherDriver;
  /** Reverts deployments whose driver is gone (tests and operators: recoverNow()). */
  deploymentRecovery: DeploymentRecovery;
  /** BillingDrainRollup's driver (tests and operators: rollUpNow()). */
  usageRollup: UsageRollupDriver;
  /** ScheduledJobScanner's driver (tests and operators: scanNow()). */
  scheduler: SchedulerDriver;
  /** Graceful stop: stop accepting, drain in-flight requests, flush outbox, audit and usage, close storage. */
  stop(): Promise<void>;
}

const DRAIN_TIMEOUT_MS = 10_000;

async function openStorage(config: NodeConfig): Promise<{ db: SqlClient; label: string }> {
  if (config.databaseUrl !== null) {
    const db = new PgClient({ connectionString: config.databaseUrl, max: config.dbPoolSize });
    return { db, label: 'postgres' };
  }
  const dir = isInMemory(config.dataDir) ? undefined : join(config.dataDir, 'pglite');
  return { db: await PgliteClient.open(dir, { sharedBuffersMb: config.pgliteSharedBuffersMb }), label: dir === undefined ? 'pglite (in memory)' : `pglite ${dir}` };
}

/** Composition root: builds storage, actors, runtime services and adapters, and starts listening. */
export async function startNode(config: NodeConfig): Promise<RunningNode> {
  const log = createLogger(config.logLevel, { nodeId: config.nodeId });
  // Owner-only before anything is written into it, and again once PGlite created its files.
  const onDisk = !isInMemory(config.dataDir);
  if (onDisk) secureDataDir(config.dataDir);
  const admin = loadAdminToken(config.adminToken, config.dataDir);
  const { db, label } = await openStorage(config);
  if (onDisk) secureDataDir(config.dataDir);
  let cluster: ClusterParts | null = null;
  /** Outbox moves and audit batches: commits that need not wait for the WAL flush (PgClient.relaxedDurability). */
  let derived: SqlClient = db;
  let natsDeadline: StartupDeadline | null = null;
  try {
    await migratePlatform(db);
    derived = (await db.relaxedDurability?.()) ?? db;
    if (config.natsUrl !== null) {
      natsDeadline = startupDeadline(config);
      cluster = await connectClusterParts(config, log, natsDeadline);
    }
  } catch (err) {
    await db.close();
    throw err;
  }

  let scopes: ScopeDirectory = new CachedScopeDirectory(db);
  let publications: PublicationSource = new PublicationRegistry(db);
  // In cluster mode the grant and API key caches are fenced by the node's bus contact (docs/adr/0009).
  const cacheTrust = cluster?.bus.contact ?? ALWAYS_TRUSTED;
  let grants: GrantSource = new SqlGrantSource(db, undefined, undefined, cacheTrust);
  const governanceCache = new GovernanceCache(db);
  let governance: GovernanceSource = governanceCache;
  // Cluster mode: hard and reservation quotas are budget leases from the Project actor (docs/adr/0007).
  const leaseVia: { control: ActorControlPlane | null } = { control: null };
  // Usage events are derived evidence like audit rows: relaxed durability (ADR 0006), flushed on stop.
  const usage = new BufferedUsageWriter(derived, log);
  const quotaLedger = new QuotaLedger(db, log, 1_000, cluster === null ? null : {
    nodeId: config.nodeId,
    exchange: (projectId, req) => leaseVia.control!.leaseQuota(projectId, req),
  }, () => services.usage);
  // Envelopes cap quotas (maxQuotas): the ledger reads the caps through the cache and reloads when an envelope changes.
  quotaLedger.setCaps((projectId) => quotaCapsOf(governanceCache, projectId));
  governanceCache.onInvalidate(() => quotaLedger.invalidateAll());
  let quotas: QuotaEnforcer = quotaLedger;
  let stability: BindingStabilitySource = new BindingStabilityCache(db);
  /** Live members other than this node: whose confirmations a state, envelope or grant change waits for. */
  const peers = async (): Promise<string[]> => (cluster === null ? [] : (await cluster.membership.members()).map((m) => m.nodeId).filter((id) => id !== config.nodeId));
  if (cluster !== null) {
    ({ scopes, publications, grants } = broadcastInvalidations(cluster.bus, { scopes, publications, grants }, peers, log));
    governance = broadcastGovernance(cluster.bus, governance, peers);
    quotas = broadcastQuotas(cluster.bus, quotas, peers);
    stability = broadcastStability(cluster.bus, stability, peers);
  }
  const apiKeys = new ApiKeyVerifier(db, undefined, undefined, cacheTrust);
  if (cluster !== null) broadcastApiKeyRevocations(cluster.bus, apiKeys, peers, log);
  // A deleted key's open realtime connections end at once, like a revoked session's.
  apiKeys.onEnded((keyId) => sessionConnections.end(apiKeyOwner(keyId)));

  const actors = new ActorSystem({
    nodeId: config.nodeId, idleMs: config.actorIdleMs, askTimeoutMs: 30_000, maxMessagesPerTurn: 64, log,
    transport: cluster?.transport ?? new InProcessTransport(),
  });
  const actorDeps = { db, scopes, publications, governance, quotas, stability };
  actors.register(tenantActor, actorDeps);
  actors.register(projectActor, actorDeps);
  const retention = new RetentionDriver({
    system: actors, db, log, rules: retentionRules(config), intervalMs: config.retentionSweepIntervalMs,
    batchRows: config.retentionBatchRows, pauseMs: config.retentionBatchPauseMs,
  });
  const usageRollup = new UsageRollupDriver({
    system: actors, db, log, intervalMs: config.usageRollupIntervalMs, batchRows: config.retentionBatchRows, pauseMs: config.retentionBatchPauseMs,
  });

  // Runs queued by a scan wake the local worker (services.scheduling, once built).
  const scheduler = new SchedulerDriver(actors, { db, nodeId: config.nodeId, publications, log, usage, kick: () => services.scheduling?.kick() });

  const schemaRecovery = new SchemaRecoveryDriver(actors, { db, log });
  // Its events go out through the outbox, made below; it is ticked only once the node started.
  const dispatcher = new DispatcherDriver(actors, { db, log, kickOutbox: () => outbox.kick() }, log);

  let webhooks: WebhookDispatcher;
  try {
    webhooks = new WebhookDispatcher(db, await SecretStore.open(db, config.secretsKey), log, {
      nodeId: config.nodeId, allowPrivateTargets: config.webhookAllowPrivateTargets, timeoutMs: config.webhookTimeoutMs, leaseMs: config.webhookClaimLeaseMs,
      routeDb: derived, usage, quotas: quotaLedger,
    });
    // A quota change lets the deliveries a quota held back go again (their next claim checks the new limits).
    quotaLedger.onChanged((projectId) => void webhooks.releaseHeld(projectId).catch((err: unknown) => log.warn('held webhook deliveries not released', { projectId, error: err instanceof Error ? err.message : String(err) })));
  } catch (err) {
    await cluster?.conn.close();
    await db.close();
    throw err;
  }
  let outbox: OutboxKicker & { start(): void; stop(): Promise<unknown> };
  let eventTail: EventTailSource;
  if (cluster !== null) {
    const parts = clusterOutbox(cluster, derived, actors, log);
    outbox = parts.driver;
    eventTail = parts.tail;
  } else {
    const processor = new OutboxProcessor(derived, log);
    outbox = processor;
    eventTail = new SqlEventTail(db, { signal: processor });
    processor.onCommitted(() => webhooks.kick());
  }
  const audit = new BufferedAuditWriter(derived, log);
  const inFlight = { count: 0 };
  const parts = cluster;
  const node = new NodeState({
    nodeId: config.nodeId, url: null, db,
    cluster: parts === null ? null : { members: () => parts.membership.members(), natsConnected: () => !parts.conn.nc.isClosed() },
    load: () => ({ activations: actors.stats().activations, inFlight: inFlight.count, rssBytes: process.memoryUsage.rss() }),
  });
  // Cluster mode listens before JetStream setup, so readiness can answer 503 while it waits out an election.
  node.starting = cluster !== null;

  // Process-wide (libuv's pool is): the last node started in a process sets it.
  setPasswordHashCost(config.passwordHashCost);
  const hashConcurrency = config.passwordHashConcurrency === 0 ? defaultHashConcurrency() : config.passwordHashConcurrency;
  passwordHashGate.configure(hashConcurrency, config.passwordHashQueue ?? defaultPasswordHashQueue(hashConcurrency));
  if (config.passwordHashCost < DEFAULT_HASH_COST) log.warn('PASSWORD_HASH_COST is below OWASP\'s minimum (17): for test suites only', { passwordHashCost: config.passwordHashCost });
  const deploymentLease = driverLease(config.nodeId, config.deploymentLeaseMs);
  const deploymentRecovery = new DeploymentRecovery({ db, lease: deploymentLease, log, invalidate: (projectId) => publications.invalidate(projectId) });
  const streams: LongLivedStreams = {
    slots: new StreamSlots({ perActor: config.realtimeMaxSubscriptionsPerActor, perNode: config.maxStreamsPerNode }),
    pages: pageQueueFor(db.backend, config.streamPageConcurrency, () => inFlight.count > 0),
  };
  // Worker threads start (and warm their engines) now, so a first handler invocation does not wait for them.
  const authoredPool = createSandboxPool({ workers: config.authoredWorkers, log: log.child({ part: 'authored-sandbox' }) });
  // Scheduled runs use the same sandbox workers: as many attempts at once as there are workers.
  const scheduling = new ScheduledJobWorker(() => services, config.authoredWorkers, config.nodeId, log.child({ part: 'scheduling' }));
  const services: Services = {
    db, log, nodeId: config.nodeId, deploymentLease,
    adminTokenDigest: createHash('sha256').update(admin.token).digest(),
    tokens: new JwtTokenVerifier(db),
    apiKeys,
    scopes, publications, grants, governance, quotas, stability,
    audit, outbox, eventTail, usage,
    control: (leaseVia.control = new ActorControlPlane(actors)),
    limits: { maxPageSize: config.maxPageSize, maxBatchRows: config.maxBatchRows, idempotencyRetentionMs: config.idempotencyRetentionMs, graphqlRequestTimeoutMs: config.graphqlRequestTimeoutMs, checkAnswers: config.checkAnswers, ...(config.checkAnswersLog === null ? {} : { checkAnswersLog: config.checkAnswersLog }) },
    node,
    webhooks,
    routes: { resolve: route, list: () => STATIC_ROUTES.map((r) => ({ method: r.method, path: r.path, operationId: r.spec.id, authn: r.spec.authn })), declared: () => PLATFORM_OPERATIONS },
    identity: { refreshReuseGraceMs: config.refreshReuseGraceMs, throttle: new LoginThrottle(config.loginThrottle), federationAllowPrivateIssuers: config.federationAllowPrivateIssuers, webauthn: config.webauthn },
    streams,
    authored: { pool: authoredPool },
    scheduling,
    realtime: new RealtimeHub({
      db, log, tail: eventTail, streams: streams.slots,
      limits: {
        perProject: config.realtimeMaxSubscriptionsPerProject, perConnection: config.realtimeMaxSubscriptionsPerConnection,
        filtersPerProject: config.realtimeMaxFiltersPerProject,
      },
      filterCheckConcurrency: config.realtimeFilterCheckConcurrency,
      peers: cluster === null ? undefined : new ClusterRealtimeUsage(cluster.bus, config.nodeId),
    }),
  };

  // One mechanism (docs/usage.md "Catalog"): a realtime.subscriptions quota's `used` is the hub's open subscriptions, cluster-wide.
  quotaLedger.setGauge('realtime.subscriptions', (projectId) => services.realtime?.usedBy(projectId) ?? 0);

  let http: HttpServer;
  try {
    http = await startHttpServer(services, config.host, config.port, { maxBodyBytes: config.maxBodyBytes, maxUploadBytes: config.maxUploadBytes, maxResponseBytes: config.maxResponseBytes, corsOrigin: config.corsOrigin, realtimeMaxBufferedBytes: config.realtimeMaxBufferedBytes }, inFlight);
  } catch (err) {
    await authoredPool.close();
    await actors.stop();
    await cluster?.conn.close();
    await db.close();
    throw err;
  }
  let grpc: GrpcServer;
  try {
    grpc = await startGrpcServer(services, config.host, config.grpcPort, { maxMessageBytes: config.maxBodyBytes });
  } catch (err) {
    http.close();
    await authoredPool.close();
    await actors.stop();
    await cluster?.conn.close();
    await db.close();
    throw err;
  }
  node.url = `http://${config.host}:${http.port}`;
  if (cluster !== null) {
    try {
      await setUpJetStream(cluster, natsDeadline!, { load: () => node.self().load, url: () => node.url }, log);
    } catch (err) {
      http.close();
      await grpc.stop(0);
      services.realtime?.close();
      await authoredPool.close();
      cluster.bus.close();
      await actors.stop();
      await cluster.conn.close();
      await db.close();
      throw err;
    }
    node.starting = false;
  }
  // A schema change a crash interrupted is finished or undone before the node reports it started (docs/schema-journal.md).
  if (!schemaRecoveryAtStartSkipped()) await schemaRecovery.recoverNow().catch((err: unknown) => log.warn('schema recovery at start failed', { error: err instanceof Error ? err.message : String(err) }));
  // Deployments a dead node left in flight are reverted (docs/proposals-and-deployments.md "Recovery"); then a sweep every lease period.
  await deploymentRecovery.recoverNow().catch((err: unknown) => log.warn('deployment recovery at start failed', { error: err instanceof Error ? err.message : String(err) }));
  deploymentRecovery.start();
  outbox.start();
  webhooks.start();
  retention.start();
  usageRollup.start();
  scheduler.start();
  scheduling.start();
  dispatcher.start();

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // Readiness fails first, so a balancer stops sending work; then no new connections.
      node.draining = true;
      http.stopListening();
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      const grpcDrained = grpc.stop(DRAIN_TIMEOUT_MS);
      while (inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await grpcDrained;
      // Flush the outbox while the actors (the cluster's outbox actor among them) still run.
      await outbox.stop();
      // Stop claiming deliveries and let the sends in flight finish (bounded).
      await webhooks.stop();
      retention.stop();
      usageRollup.stop();
      // Running attempts are abandoned (rolled back); their leases run out and another node retries them.
      dispatcher.stop();
      await scheduling.stop();
      scheduler.stop();
      // Requests have drained, so no handler is running: the sandbox workers end.
      await authoredPool.close();
      // Deployments this node drives are reverted now (docs/proposals-and-deployments.md "Recovery").
      await deploymentRecovery.stop().catch((err: unknown) => log.warn('deployments not reverted at stop; another node reverts them after the lease', { error: err instanceof Error ? err.message : String(err) }));
      // Quota budget leases go back to their owners while the actors still run.
      await quotaLedger.returnLeases();
      // Deactivates actors and, in cluster mode, hands their leases back at once.
      await actors.stop();
      await cluster?.membership.stop();
      await audit.flush();
      await usage.flush();
      await quotaLedger.close();
      services.realtime?.close();
      cluster?.bus.close();
      http.close();
      await cluster?.conn.close();
      await db.close();
      log.info('stopped', { mode: node.mode });
    })();
    return stopping;
  };
  return { url: node.url, port: http.port, grpcPort: grpc.port, admin, storage: cluster === null ? label : `${label}, cluster over NATS`, log, services, retention, deploymentRecovery, usageRollup, scheduler, dispatcher, stop };
}
