import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { ActorSystem } from '../actors/index.js';
import { projectActor } from '../actors/project/index.js';
import { tenantActor } from '../actors/tenant/index.js';
import { startHttpServer, type HttpServer } from '../adapters/rest/server.js';
import { InProcessTransport } from '../cluster/in-process-transport.js';
import { CachedScopeDirectory } from '../runtime/control/scope-directory.js';
import { OutboxProcessor } from '../runtime/events/outbox-processor.js';
import { JwtTokenVerifier, SqlGrantSource } from '../runtime/identity/index.js';
import { createLogger, type Logger } from '../runtime/log.js';
import { BufferedAuditWriter } from '../runtime/pipeline/audit-writer.js';
import { PublicationRegistry } from '../runtime/publication/registry.js';
import type { Services } from '../runtime/services.js';
import { migratePlatform, PgClient, PgliteClient, type SqlClient } from '../storage/index.js';
import { loadAdminToken, type AdminToken } from './admin-token.js';
import { InvalidConfig, isInMemory, type NodeConfig } from './config.js';
import { ActorControlPlane } from './actor-gateway.js';
import { NodeState } from './node-state.js';

export interface RunningNode {
  url: string;
  port: number;
  admin: AdminToken;
  storage: string;
  log: Logger;
  /** The runtime services, for diagnostics and tests (audit flush, direct SQL checks). */
  services: Services;
  /** Graceful stop: stop accepting, drain in-flight requests, flush outbox and audit, close storage. */
  stop(): Promise<void>;
}

const DRAIN_TIMEOUT_MS = 10_000;

async function openStorage(config: NodeConfig): Promise<{ db: SqlClient; label: string }> {
  if (config.databaseUrl !== null) {
    const db = new PgClient({ connectionString: config.databaseUrl, max: config.dbPoolSize });
    return { db, label: 'postgres' };
  }
  const dir = isInMemory(config.dataDir) ? undefined : join(config.dataDir, 'pglite');
  return { db: await PgliteClient.open(dir), label: dir === undefined ? 'pglite (in memory)' : `pglite ${dir}` };
}

/** Composition root: builds storage, actors, runtime services and adapters, and starts listening. */
export async function startNode(config: NodeConfig): Promise<RunningNode> {
  if (config.natsUrl !== null) throw new InvalidConfig('NATS_URL', 'cluster mode is not available in this build yet; unset NATS_URL to run a single node');
  const log = createLogger(config.logLevel, { nodeId: config.nodeId });
  const admin = loadAdminToken(config.adminToken, config.dataDir);
  const { db, label } = await openStorage(config);
  await migratePlatform(db);

  const scopes = new CachedScopeDirectory(db);
  const publications = new PublicationRegistry(db);
  const transport = new InProcessTransport();
  const actors = new ActorSystem({ nodeId: config.nodeId, idleMs: config.actorIdleMs, askTimeoutMs: 30_000, maxMessagesPerTurn: 64, log, transport });
  const actorDeps = { db, scopes, publications };
  actors.register(tenantActor, actorDeps);
  actors.register(projectActor, actorDeps);
  const outbox = new OutboxProcessor(db, log);
  const audit = new BufferedAuditWriter(db, log);
  const inFlight = { count: 0 };
  const node = new NodeState({
    nodeId: config.nodeId, url: null, db, cluster: null,
    load: () => ({ activations: actors.stats().activations, inFlight: inFlight.count, rssBytes: process.memoryUsage.rss() }),
  });

  const services: Services = {
    db, log, nodeId: config.nodeId,
    adminTokenDigest: createHash('sha256').update(admin.token).digest(),
    tokens: new JwtTokenVerifier(db),
    scopes, publications,
    grants: new SqlGrantSource(db),
    audit, outbox,
    control: new ActorControlPlane(actors),
    limits: { maxPageSize: config.maxPageSize, maxBatchRows: config.maxBatchRows, idempotencyRetentionMs: config.idempotencyRetentionMs },
    node,
  };

  let http: HttpServer;
  try {
    http = await startHttpServer(services, config.host, config.port, { maxBodyBytes: config.maxBodyBytes, corsOrigin: config.corsOrigin }, inFlight);
  } catch (err) {
    await db.close();
    throw err;
  }
  outbox.start();

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      node.draining = true;
      http.stopListening();
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      while (http.inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      await actors.stop();
      await outbox.stop();
      await audit.flush();
      http.close();
      await db.close();
    })();
    return stopping;
  };
  node.url = `http://${config.host}:${http.port}`;
  return { url: node.url, port: http.port, admin, storage: label, log, services, stop };
}
