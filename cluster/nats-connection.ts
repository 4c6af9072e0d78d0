import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { StartupDeadline, startupStep } from './startup.js';

/** One node's connection to the NATS cluster, with its JetStream and KV handles. */
export interface ClusterConnection {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kvm: Kvm;
  readonly nodeId: string;
  /** Servers in the cluster when we connected (JetStream replica counts follow it, capped at 3). */
  readonly clusterSize: number;
  close(): Promise<void>;
}

export interface ClusterConnectOptions {
  servers: string[];
  nodeId: string;
  /**
   * Reconnect only to `servers`, ignoring the peers a server advertises.
   * Default false (follow the cluster). Tests use it to cut a node off.
   */
  ignoreClusterUpdates?: boolean;
  /** How long to keep trying while no server accepts the connection. Default: 30 s. */
  deadline?: StartupDeadline;
}

/** A refused or timed-out connection is worth another try; bad credentials are not. */
const retryableConnectError = (err: unknown): boolean => !/authori[sz]ation|authentication|permission/i.test(String(err));

/** `nats://h1:4222,nats://h2:4222` → list; bare `host:port` allowed. */
export function parseNatsUrl(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * Connects with endless reconnects (a NATS server restart must not take the
 * node down) and reads the cluster size from the server's INFO. The first
 * connection is retried until the deadline. No JetStream call is made here:
 * JetStream may be electing a leader while core NATS already works, and the
 * setup steps that need it retry on their own (see node/cluster-mode.ts).
 */
export async function connectCluster(opts: ClusterConnectOptions): Promise<ClusterConnection> {
  const deadline = opts.deadline ?? new StartupDeadline(30_000, 'connect deadline');
  const nc = await startupStep(
    `connect to NATS (${opts.servers.join(',')})`,
    deadline,
    () => connect({ servers: opts.servers, name: opts.nodeId, maxReconnectAttempts: -1, reconnectTimeWait: 250, pingInterval: 5_000, ignoreClusterUpdates: opts.ignoreClusterUpdates ?? false }),
    { transient: retryableConnectError },
  );
  const info = nc.info as { connect_urls?: string[]; cluster?: string } | undefined;
  const peers = new Set([...(info?.connect_urls ?? []), ...opts.servers]);
  const clusterSize = info?.cluster === undefined ? 1 : Math.max(1, Math.min(peers.size, opts.servers.length > 1 ? opts.servers.length : peers.size));
  const js = jetstream(nc, { timeout: 5_000 });
  // checkAPI: false, because its account-info request fails (times out) while the meta leader is being elected.
  const jsm = await jetstreamManager(nc, { timeout: 5_000, checkAPI: false });
  return {
    nc, js, jsm, kvm: new Kvm(js), nodeId: opts.nodeId, clusterSize,
    close: async () => {
      await nc.drain().catch(() => nc.close());
    },
  };
}

/** JetStream replica count for platform buckets and streams: 3 when the cluster has 3+ servers. */
export const replicasFor = (conn: Pick<ClusterConnection, 'clusterSize'>): number => (conn.clusterSize >= 3 ? 3 : 1);
