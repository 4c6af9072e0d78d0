import { outboxActor, OutboxDriver } from '../actors/outbox/index.js';
import type { ActorSystem } from '../actors/index.js';
import { ClusterBus } from '../cluster/cluster-bus.js';
import { JetStreamEventLog } from '../cluster/event-stream.js';
import { LEASE_BUCKET } from '../cluster/leases.js';
import { Membership, MEMBERS_BUCKET, type MemberLoad } from '../cluster/membership.js';
import { connectCluster, parseNatsUrl, type ClusterConnection } from '../cluster/nats-connection.js';
import { NatsActorTransport } from '../cluster/nats-transport.js';
import { StartupDeadline, startupStep } from '../cluster/startup.js';
import { LogEventTail } from '../runtime/events/event-tail.js';
import { OutboxProcessor } from '../runtime/events/outbox-processor.js';
import type { Logger } from '../runtime/log.js';
import type { SqlClient } from '../storage/index.js';
import type { NodeConfig } from './config.js';

/** Everything a node needs from NATS in cluster mode. */
export interface ClusterParts {
  conn: ClusterConnection;
  transport: NatsActorTransport;
  bus: ClusterBus;
  membership: Membership;
  eventLog: JetStreamEventLog;
}

/** The deadline of one boot's NATS setup (NATS_STARTUP_DEADLINE_MS). */
export const startupDeadline = (config: NodeConfig): StartupDeadline => new StartupDeadline(config.natsStartupDeadlineMs, 'NATS_STARTUP_DEADLINE_MS');

/**
 * Boot, part 1 (before HTTP listens): the core NATS connection, retried
 * while no server accepts it, and the cluster objects. No JetStream call yet.
 */
export async function connectClusterParts(config: NodeConfig, log: Logger, deadline: StartupDeadline): Promise<ClusterParts> {
  const conn = await connectCluster({ servers: parseNatsUrl(config.natsUrl!), nodeId: config.nodeId, deadline });
  try {
    const transport = new NatsActorTransport(conn, { leaseTtlMs: config.actorLeaseTtlMs, log });
    const eventLog = new JetStreamEventLog(conn, {
      maxAgeMs: config.eventStreamMaxAgeHours * 3_600_000,
      // 0 means no size limit: JetStream reserves max_bytes on every replica up front.
      maxBytes: config.eventStreamMaxBytes === 0 ? -1 : config.eventStreamMaxBytes,
      duplicateWindowMs: Math.min(config.eventDedupeWindowS * 1000, config.eventStreamMaxAgeHours * 3_600_000),
    });
    return { conn, transport, bus: new ClusterBus(conn.nc, config.nodeId), membership: new Membership(conn, { log }), eventLog };
  } catch (err) {
    await conn.close();
    throw err;
  }
}

/**
 * Boot, part 2 (HTTP already listening, readiness answering 503): every
 * JetStream setup call, each retried through leader elections and a server
 * being down until the shared startup deadline. A failure names the step.
 */
export async function setUpJetStream(parts: ClusterParts, deadline: StartupDeadline, self: { load: () => MemberLoad; url: () => string | null }, log: Logger): Promise<void> {
  const waiting = (step: string) => (err: unknown): void =>
    log.warn('cluster setup waiting for NATS JetStream', { step, error: String(err), deadlineMs: deadline.totalMs, remainingMs: deadline.remainingMs });
  const step = <T>(name: string, attempt: (remainingMs: number) => Promise<T>): Promise<T> => startupStep(name, deadline, attempt, { onRetry: waiting(name) });
  await step('JetStream account info', () => parts.conn.jsm.getAccountInfo());
  await step(`KV bucket ${LEASE_BUCKET} (actor leases)`, (ms) => parts.transport.ready(ms));
  await step(`stream ${parts.eventLog.stream} (event log)`, (ms) => parts.eventLog.ensure(ms));
  await step(`KV bucket ${MEMBERS_BUCKET} (membership)`, (ms) => parts.membership.start(self.load, self.url, ms));
}

/**
 * The cluster's outbox: the drain loop runs in the `outbox/main` actor, so
 * exactly one node drains at a time, publishing to JetStream before the
 * rows are retired. Every node kicks it after its commits and sweeps on a timer.
 */
export function clusterOutbox(parts: ClusterParts, db: SqlClient, actors: ActorSystem, log: Logger): { driver: OutboxDriver; tail: LogEventTail } {
  const processor = new OutboxProcessor(db, log, { sink: parts.eventLog });
  actors.register(outboxActor, { processor });
  return { driver: new OutboxDriver({ system: actors, log }), tail: new LogEventTail(parts.eventLog) };
}
