import type { SqlClient } from '../storage/index.js';
import type { NodeMember, NodeStatus } from '../runtime/services.js';

export interface NodeLoad {
  activations: number;
  inFlight: number;
  rssBytes: number;
}

export interface NodeStateOptions {
  nodeId: string;
  url: string | null;
  db: SqlClient;
  load: () => NodeLoad;
  /** Cluster mode: live members, and whether the NATS connection is up. */
  cluster: { members(): Promise<NodeMember[]>; natsConnected(): boolean } | null;
}

const CHECK_TIMEOUT_MS = 2_000;

/** This node's mode, draining flag, dependency checks and view of its peers. */
export class NodeState implements NodeStatus {
  draining = false;
  /** True while boot is still setting up (cluster mode: JetStream buckets, stream, membership): readiness fails meanwhile. */
  starting = false;
  readonly startedAt = new Date().toISOString();
  url: string | null;

  constructor(private readonly opts: NodeStateOptions) {
    this.url = opts.url;
  }

  get mode(): 'single' | 'cluster' {
    return this.opts.cluster === null ? 'single' : 'cluster';
  }

  async check(): Promise<{ ok: boolean; checks: Record<string, string> }> {
    const checks: Record<string, string> = {};
    try {
      await Promise.race([
        this.opts.db.query('SELECT 1'),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS).unref()),
      ]);
      checks.storage = 'ok';
    } catch (err) {
      checks.storage = err instanceof Error && err.message === 'timeout' ? 'timeout' : 'unreachable';
    }
    if (this.opts.cluster !== null) checks.nats = this.opts.cluster.natsConnected() ? 'ok' : 'disconnected';
    if (this.starting) checks.startup = 'in progress';
    return { ok: Object.values(checks).every((v) => v === 'ok'), checks };
  }

  self(): NodeMember {
    return { nodeId: this.opts.nodeId, startedAt: this.startedAt, updatedAt: new Date().toISOString(), url: this.url, load: this.opts.load() };
  }

  members(): Promise<NodeMember[]> {
    return this.opts.cluster === null ? Promise.resolve([this.self()]) : this.opts.cluster.members();
  }
}
