import { outboxActor, OutboxDriver } from '../actors/outbox/index.js';
import type { ActorSystem } from '../actors/index.js';
import { ClusterBus } from '../cluster/cluster-bus.js';
import { JetStreamEventLog } from '../cluster/event-stream.js';
import { Membership } from '../cluster/membership.js';
import { connectCluster, parseNatsUrl, type ClusterConnection } from '../cluster/nats-connection.js';
import { NatsActorTransport } from '../cluster/nats-transport.js';
import { LogEventTail } from '../runtime/events/event-tail.js';
import { OutboxProcessor } from '../runtime/events/outbox-processor.js';
import type { Logger } from '../runtime/log.js';
import type { SqlClient } from '../storage/index.js';
import type { NodeConfig } from './config.js';

/** Everything a node needs from NATS in cluster mode, connected and ready before HTTP starts. */
export interface ClusterParts {
  conn: ClusterConnection;
  transport: NatsActorTransport;
  bus: ClusterBus;
  membership: Membership;
  eventLog: JetStreamEventLog;
}

export async function connectClusterParts(config: NodeConfig, log: Logger): Promise<ClusterParts> {
  const conn = await connectCluster({ servers: parseNatsUrl(config.natsUrl!), nodeId: config.nodeId });
  try {
    const transport = new NatsActorTransport(conn, { leaseTtlMs: config.actorLeaseTtlMs, log });
    await transport.ready();
    const eventLog = new JetStreamEventLog(conn, {
      maxAgeMs: config.eventStreamMaxAgeHours * 3_600_000,
      // 0 means no size limit: JetStream reserves max_bytes on every replica up front.
      maxBytes: config.eventStreamMaxBytes === 0 ? -1 : config.eventStreamMaxBytes,
      duplicateWindowMs: Math.min(config.eventDedupeWindowS * 1000, config.eventStreamMaxAgeHours * 3_600_000),
    });
    await eventLog.ensure();
    return { conn, transport, bus: new ClusterBus(conn.nc, config.nodeId), membership: new Membership(conn, { log }), eventLog };
  } catch (err) {
    await conn.close();
    throw err;
  }
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
