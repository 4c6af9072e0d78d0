import type { PageShape, RowShape } from '../entities/shape.js';
import type { CompiledEntity } from '../entities/compiled-entity.js';
import type { CompiledPublication } from '../publication/compiled-publication.js';
import type { EntityOperation } from '../publication/operations.js';
import type { Services } from '../services.js';
import type { CompiledEnvelope } from '../governance/compiled.js';
import type { GrantPolicySet } from '../policy/grant-policy.js';
import type { RowPolicy } from '../policy/row-policy.js';
import type { Actor } from '../identity/actor.js';
import type { ProjectRow, TenantRow } from '../control/rows.js';
import type { AccessDecision } from '../pipeline/audit-row.js';
import type { Result } from './result.js';
import type { EntityArgs } from '../entities/entity-args.js';
import type { ProtocolName } from '../versioning/platform.js';
import type { Authn, OperationContract } from './contract/index.js';
import type { AuthoredInvocationRecord } from '../authored/types.js';

// Defined below the operation layer (so lower layers import them without a cycle); re-exported for the operations.
export { ANONYMOUS, AUTH_STRENGTHS, PLATFORM_ADMIN, type Actor, type AuthStrength } from '../identity/actor.js';
export type { ProjectRow, TenantRow } from '../control/rows.js';
export type { AccessDecision } from '../pipeline/audit-row.js';
export type { Result, ResultStream, StreamSink } from './result.js';

/**
 * What the pipeline decided along the way, for stage 6's record and for
 * Explainability. `stage` is the stage running (1–5) or 6 once the
 * operation executed; on an error it names the stage that refused. 0: the
 * protocol adapter refused the request before the pipeline (no route, body
 * too large or undecodable; runtime/pipeline/refusal.ts).
 */
export interface DecisionTrace {
  stage: number;
  /** The row filter applied (request filter ANDed with the caller's row policy, `$actor` substituted); null when none. */
  evaluatedFilter: unknown;
  /** Fields removed from the caller's rows by a field mask; empty when nothing is masked. */
  fieldMasks: readonly string[];
}

/** Stage 2's output: where the call runs and which publication it is pinned to. */
export interface Scope {
  tenant: TenantRow;
  project: ProjectRow;
  branch: string;
  publication: CompiledPublication;
}

/** Protocol-neutral request: what every adapter turns its traffic into. */
/**
 * The protocol a request came in by: audit rows, usage events and bindings name it.
 * Realtime subscribes and webhook deliveries are requested over REST.
 */
export type Protocol = Exclude<ProtocolName, 'realtime' | 'webhooks'>;

/**
 * A shaped read (entities/shape.ts): protocols that select fields describe
 * the rows they want instead of REST's query string. List takes `page`,
 * Read takes `row`; the executor plans either into one SQL statement.
 */
export type ShapedRead = { page: PageShape } | { row: RowShape };

export interface Invocation {
  correlationId: string;
  protocol: Protocol;
  operation: OperationSpec;
  /** Entity collection segment (`orders`) for entity operations. */
  collection: string | null;
  /** Relation or route-tail segment for relation operations. */
  relation: string | null;
  params: Readonly<Record<string, string>>;
  /** The REST query string, for platform routes that take query parameters. Entity operations read `args`. */
  query: ReadonlyMap<string, string>;
  /** Entity operation arguments (filter, sort, fields, include, paging, cursor, force), whatever the protocol. Absent: none. */
  args?: EntityArgs;
  body: unknown;
  bearer: string | null;
  tenantHeader: string | null;
  projectHeader: string | null;
  branchHeader: string | null;
  idempotencyKey: string | null;
  ifMatch: string | null;
  /** `/api` or `/v1`: echoed in links (explainUrl). */
  basePath: string;
  /** SSE resume position (`Last-Event-ID` header) for streaming operations; absent or null when not sent. */
  lastEventId?: string | null;
  /** The request body bytes, undecoded, for specs with `rawBody: true` (`body` is then undefined). */
  rawBody?: Buffer;
  /** Headers a spec asked for through `requestHeaders` (lower-case names; '' when absent). */
  headers?: Readonly<Record<string, string>>;
  /** The actor of the request this call is part of, authenticated by stage 1 of that request (a GraphQL root field). */
  authenticated?: Actor;
  /** Set by protocols that select fields (GraphQL): the rows and columns to read, in place of `query`'s fields/include. */
  read?: ShapedRead;
  /** The peer's IP address as the socket sees it (no X-Forwarded-For trust); login throttling counts by it. */
  clientAddress?: string | null;
  /**
   * The exposure binding this invocation projects, when it is not the one its
   * operation and protocol name (gRPC StreamList dispatches List, Watch
   * dispatches Realtime.Subscribe): refusals name it, its stability applies.
   */
  bindingId?: string;
  /**
   * Aborts when the work is no longer wanted: the caller went away, or (GraphQL) the request's
   * time bound passed. Reads pass it to the database, which stops their statements (PostgreSQL).
   */
  signal?: AbortSignal;
}

export interface OperationContext {
  /** Replaced once, by stage 2, when `POST /{collection}/{id}/{name}` turns out to be an authored operation rather than a relation attach. */
  inv: Invocation;
  readonly services: Services;
  actor: Actor;
  scope: Scope | null;
  /** Concrete operation id (`Entity.Order.Read`); starts as the spec id. */
  operationId: string;
  /** Set by stage 2 for entity operations. */
  entity: CompiledEntity | null;
  entityOperation: EntityOperation | null;
  /**
   * The caller's row policy and field masks from stage 5 (runtime/policy/):
   * null when no grant it holds carries rowFilter/check/fields (and for the
   * admin): executors then add nothing.
   */
  rowPolicy: RowPolicy | null;
  /** Filled by the stages as they decide; read by stage 6 (runtime/pipeline/evidence.ts). */
  trace: DecisionTrace;
  /** The project's effective governance envelope, set by stage 3 (list page sizes read it); null when none applies. */
  envelope: CompiledEnvelope | null;
  /** An authored operation's invocation (runtime/authored/invoke.ts), for stage 6's audit row and usage; absent otherwise. */
  authored?: AuthoredInvocationRecord;
}

export type { Authn } from './contract/index.js';

/**
 * One operation, declared once. Every protocol adapter projects from these;
 * the pipeline reads `authn`, `scope` and `grants`, then calls `execute`.
 */
export interface OperationSpec {
  id: string;
  /** public: no bearer needed; user: admin or a project user token; admin: platform admin only. */
  authn: Authn;
  /** project: tenant/project headers required, publication resolved. */
  scope: 'none' | 'project';
  /** Grants required beyond authentication (stage 4). Admin holds every grant. */
  grants(ctx: OperationContext): readonly string[];
  execute(ctx: OperationContext): Promise<Result>;
  /** The adapter skips JSON decoding and hands the exact bytes over in `inv.rawBody` (signature checks over the raw body). */
  rawBody?: true;
  /**
   * Bytes this operation's request body may have, in place of MAX_BODY_BYTES (source-asset
   * uploads: 100 MiB). Only a few raw-body operations declare one; MAX_UPLOAD_BYTES can lower it.
   */
  maxBodyBytes?: number;
  /** Lower-case header names the adapter copies into `inv.headers`. */
  requestHeaders?: readonly string[];
  /** `graphql`: errors answer `{ errors: [{ message, extensions: { code, reasonCode, correlationId } }] }` (CONTRACT: GraphQL) instead of the REST envelope. */
  errorShape?: 'graphql';
  /**
   * `failures`: an allowed call leaves no audit row of its own (a refusal still does). For a
   * request whose parts are dispatched operations with their own rows (GraphQL.Request):
   * the parts are the decisions, and the explain record of the correlationId is theirs.
   */
  evidence?: 'failures';
  /** The adapter sets `inv.signal`, aborted when the client goes away (GraphQL.Request: its statements stop with it). */
  abortable?: true;
  /**
   * Its routes, input and output schemas, errors, metering and stability
   * (contract/types.ts). Every operation the REST route table serves has one
   * (catalog.ts); entity operations are described by their publication instead.
   */
  contract?: OperationContract;
}

/** An operation with its contract: what the platform catalog (catalog.ts) holds. */
export type DeclaredSpec = OperationSpec & { readonly contract: OperationContract };

export const noGrants = (): readonly string[] => [];
