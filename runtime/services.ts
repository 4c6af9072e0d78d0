import type { AuthoredPool } from './authored/types.js';
import type { SchedulingRuntime } from './scheduling/types.js';
import type { GrantPolicySet } from './policy/grant-policy.js';
import type { SqlClient } from '../storage/index.js';
import type { ApiKeyVerifier } from './identity/api-keys.js';
import type { IdentityPolicy } from './identity/policy.js';
import type { Logger } from './log.js';
import type { ProjectRow, TenantRow } from './control/rows.js';
import type { TokenVerifier } from './identity/token-verifier.js';
import type { UsageSink } from './usage/sink.js';

export type { TokenVerifier } from './identity/token-verifier.js';
export type { UsageEvent, UsageSink } from './usage/sink.js';
import type { ServiceError } from './errors/service-error.js';
import type { CompiledPublication } from './publication/compiled-publication.js';
import type { AuditRow } from './pipeline/audit-row.js';
import type { ControlPlaneGateway } from './control/gateway.js';
import type { BindingStabilitySource } from './versioning/stability-cache.js';
import type { EventTailSource } from './events/event-tail.js';
import type { RealtimeHub } from './realtime/hub.js';
import type { LongLivedStreams } from './streams/stream-slots.js';
import type { DriverLease } from './deployments/deployment-lease.js';
import type { CompiledEnvelope } from './governance/compiled.js';
import type { OutboundWebhooks } from './webhooks/outbound/dispatcher.js';
import type { AdmissionRequest } from './quota/units.js';
import type { ConcurrencyQuotas, QuotaHold, QuotaSummaryRow } from './quota/ledger.js';
import type { DeclaredOperation } from './operations/contract/index.js';

/** Resolves tenant/project by slug or id; cached, invalidated by the owning actors. */
export interface ScopeDirectory {
  tenant(slugOrId: string): Promise<TenantRow | null>;
  project(tenantId: string, slugOrId: string): Promise<ProjectRow | null>;
  branchExists(projectId: string, branch: string): Promise<boolean>;
  /** In cluster mode it resolves once the peers dropped theirs too (or a bound passed), so a state change applies from the next request everywhere. */
  invalidate(): void | Promise<void>;
}

/** The live publication of a project branch on this node. */
export interface PublicationSource {
  current(tenantId: string, projectId: string, branch: string): Promise<CompiledPublication>;
  /** What production serves a request without `X-Service-Branch` (CONTRACT "Deployments"; the ramp picks by correlation id). */
  serving(tenantId: string, projectId: string, correlationId: string): Promise<CompiledPublication>;
  /** Installs a publication that was just made live (by the project actor on this node). */
  install(pub: CompiledPublication): void;
  invalidate(projectId: string): void;
}

/** Grants a project user holds (directly and through roles). */
export interface HeldGrants {
  grants: ReadonlySet<string>;
  /** Null when no held grant carries a policy part: no row policy, no mask (the hot path). */
  policy: GrantPolicySet | null;
}

export interface GrantSource {
  held(projectId: string, subjectId: string, roles: readonly string[]): Promise<ReadonlySet<string>>;
  /** The held grant strings and, when any of them carries rowFilter/check/fields, the whole set with those parts (runtime/policy/). */
  heldWithPolicy(projectId: string, subjectId: string, roles: readonly string[]): Promise<HeldGrants>;
  /**
   * `revoked`: a grant was deleted; open realtime connections of the project end (they were authorized under it).
   * In cluster mode it resolves once every live peer confirmed it dropped the project's grants (docs/adr/0009).
   */
  invalidate(projectId: string, revoked?: boolean): void | Promise<void>;
}

/** Effective governance envelopes per project (runtime/governance/cache.ts), read by stage 3. */
export interface GovernanceSource {
  /** The project's effective envelope, null when no project in its chain has one; synchronous on a cache hit. */
  effective(projectId: string): CompiledEnvelope | null | Promise<CompiledEnvelope | null>;
  /** An envelope changed somewhere: drop every cached one. In cluster mode it resolves once the peers dropped theirs (or a bound passed). */
  invalidate(): void | Promise<void>;
}

/** Project quotas (runtime/quota/): the dispatch stage that checks them and the owner of their counters. */
export interface QuotaEnforcer {
  /** Null when no quota applies; throws 429 QUOTA_EXCEEDED for an operation a hard or reservation quota refuses. Synchronous once the project's quotas are loaded. */
  admit(ctx: AdmissionRequest): QuotaHold | null | Promise<QuotaHold | null>;
  summary(projectId: string): Promise<QuotaSummaryRow[]>;
  /** A concurrency kind's quotas (realtime.subscriptions): what the realtime hub enforces; synchronous once loaded. */
  concurrency(projectId: string, kind: string): ConcurrencyQuotas | Promise<ConcurrencyQuotas>;
  /** A quota changed: the next request reloads the project's quotas. In cluster mode it resolves once the peers dropped theirs (or a bound passed). */
  invalidate(projectId: string): void | Promise<void>;
}

export interface AuditSink {
  record(row: AuditRow): void;
  flush(): Promise<void>;
}

/**
 * What Explainability reads of a routed operation. An OperationSpec has it
 * (runtime/operations/types.ts); named here because that module depends on
 * this one, not the other way round.
 */
export interface RoutedOperation {
  readonly id: string;
  readonly authn: 'public' | 'user' | 'admin';
  /** Compared with `noGrants` to tell fixed grants from per-request ones. */
  readonly grants: unknown;
}

/** What a REST method and path resolve to, before scope (entity routes name a collection, checked against the publication). */
export interface RouteResolution {
  spec: RoutedOperation;
  params: Record<string, string>;
  collection: string | null;
  relation: string | null;
}

/**
 * The REST adapter's route table, handed down so runtime can explain routing
 * (`GET /api/Explainability/apiSurface`) without importing an adapter.
 * `segs`: the decoded path segments below the base (`/api` or `/v1`).
 */
export interface RouteTable {
  resolve(method: string, segs: string[]): RouteResolution | ServiceError;
  /** Every fixed route (entity routes are resolved by shape), for `GET /api/Platform/admin-surface`. */
  list?(): ReadonlyArray<{ method: string; path: string; operationId: string; authn: string }>;
  /** The declared platform operations (runtime/operations/catalog.ts), for the OpenAPI document and the CLI descriptor. */
  declared?(): readonly DeclaredOperation[];
}

export interface OutboxKicker {
  /** A write committed outbox rows: move them to the event log soon. */
  kick(): void;
}

/** A node as seen by health, readiness and the runtime fabric. */
export interface NodeMember {
  nodeId: string;
  startedAt: string;
  updatedAt: string;
  url: string | null;
  load: { activations: number; inFlight: number; rssBytes: number };
}

export interface NodeStatus {
  readonly mode: 'single' | 'cluster';
  /** True once a graceful stop began: readiness fails so balancers stop sending work. */
  readonly draining: boolean;
  /** Dependency checks for readiness (storage, NATS). */
  check(): Promise<{ ok: boolean; checks: Record<string, string> }>;
  /** Live members of the cluster (just this node in single mode). */
  members(): Promise<NodeMember[]>;
}

export interface Limits {
  maxPageSize: number;
  maxBatchRows: number;
  idempotencyRetentionMs: number;
  /** GRAPHQL_REQUEST_TIMEOUT_MS (runtime/graphql/request-budget.ts); absent: its default. */
  graphqlRequestTimeoutMs?: number;
  /** Check REST answers of declared operations against their declared schema (contract/check-answer.ts); tests turn it on. */
  checkAnswers?: boolean;
  /** Where checked answers are noted, one file per process (contract/answer-log.ts). */
  checkAnswersLog?: string;
}

export interface Services {
  readonly db: SqlClient;
  readonly log: Logger;
  readonly nodeId: string;
  /** sha256 of the platform admin token, compared in constant time. */
  readonly adminTokenDigest: Buffer;
  readonly tokens: TokenVerifier;
  readonly scopes: ScopeDirectory;
  readonly publications: PublicationSource;
  readonly grants: GrantSource;
  readonly audit: AuditSink;
  readonly outbox: OutboxKicker;
  readonly control: ControlPlaneGateway;
  readonly limits: Limits;
  /** Follows a project's event log for `GET /api/events/tail`. Absent: a SqlEventTail over `db` (embedded mode's log). Cluster: a LogEventTail over JetStream. */
  readonly eventTail?: EventTailSource;
  readonly node: NodeStatus;
  /** Outbound webhooks (secrets, target policy, dispatcher kick). Absent: the webhook routes answer 503. */
  readonly webhooks?: OutboundWebhooks;
  /** Bounds on the long-lived streams of this node (every protocol's): slots per actor and per node, and StreamList's page queries. */
  readonly streams: LongLivedStreams;
  /** Realtime subscriptions of this node (WebSocket and SSE). Absent: realtime routes answer 404. */
  readonly realtime?: RealtimeHub;
  /** Project API keys (`plk_…` bearers). Absent: such a bearer is refused like any invalid token. */
  readonly apiKeys?: ApiKeyVerifier;
  /** Governance envelopes (stage 3, grant creation, list page sizes). Absent: no envelope applies (unit tests). */
  readonly governance?: GovernanceSource;
  /** Login throttling and refresh-token grace of this node. Absent: the defaults (runtime/identity/policy.ts). */
  readonly identity?: IdentityPolicy;
  /** Usage metering (runtime/usage/). Absent: nothing is metered (tests that build Services by hand). */
  readonly usage?: UsageSink;
  /** Quotas (runtime/quota/). Absent: no quota is enforced and the quota routes answer 503. */
  readonly quotas?: QuotaEnforcer;
  /** Announced stability of exposure bindings (runtime/versioning/). Absent: every binding is Stable. */
  readonly stability?: BindingStabilitySource;
  /** The REST route table (node/start.ts injects adapters/rest/router.ts). Absent: apiSurface answers 503. */
  readonly routes?: RouteTable;
  /** This node's claim on the deployments it drives (runtime/deployments/deployment-lease.ts). Absent: one made from `nodeId` with the default TTL. */
  readonly deploymentLease?: DriverLease;
  /** Authored code's sandbox pool (runtime/authored/). Absent: operations backed by handlers answer 503. */
  readonly authored?: AuthoredServices;
  /** The node's scheduling machinery (runtime/scheduling/): `kick` after queueing a run. Absent: runs wait for a worker's poll. */
  readonly scheduling?: SchedulingRuntime;
}

/** What authored code needs of the node: the sandbox pool its invocations run in. */
export interface AuthoredServices {
  readonly pool: AuthoredPool;
}
