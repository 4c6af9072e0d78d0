/**
 * An operation's contract, declared once next to its handler: the routes it
 * answers, what it takes and answers as JSON Schema, its errors, how it is
 * metered and how stable it is. The REST route table, request validation, the
 * OpenAPI document and the CLI descriptor are all derived from it
 * (docs/architecture.md, "Declaring an operation").
 */

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 takes it) or any JSON object. */
export type Json = Record<string, unknown>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call: no bearer needed, the admin or a project user token, the platform admin only. */
export type Authn = 'public' | 'user' | 'admin';

/** A schema the OpenAPI document lists under `components.schemas` and other schemas `$ref` by name. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: Json;
}

/** One route of an operation. Paths are below the base (`/api`, `/v1`); `:name` captures a path parameter. */
export interface RouteDecl {
  readonly method: HttpMethod;
  readonly path: string;
  /** The OpenAPI operation id of this route. Default: the spec's id for its first route, `<id>Alias` for the others. */
  readonly operationId?: string;
  /** Replaces the contract's summary for this route (an alias that says what it aliases). */
  readonly summary?: string;
}

/** A path, query or header parameter. */
export interface ParamDecl {
  readonly description: string;
  /** Default `{ type: 'string' }`. */
  readonly schema?: Json;
  /** Query and header parameters only; path parameters are always required. */
  readonly required?: boolean;
}

/**
 * What a successful call answers. `json`: a JSON body (`body`) or none (204);
 * `sse`: a Server-Sent Events stream whose `data:` is `sse.data`;
 * `upgrade`: a WebSocket (101); `document`: another media type (`mediaType`).
 */
export interface OutputDecl {
  readonly status: 101 | 200 | 201 | 202 | 204;
  /** A second success status with the same body: a PUT that answers 201 when it created and 200 when it replaced. */
  readonly alsoStatus?: 200 | 201;
  readonly body?: NamedSchema;
  readonly sse?: { readonly event: string; readonly data: NamedSchema };
  readonly upgrade?: true;
  /** Media type of a non-JSON answer (`application/yaml`, `text/html`, `application/gzip`): the body is described as a string. */
  readonly mediaType?: string;
  /** The answer carries an `ETag`; `If-None-Match` with it answers 304 without a body. */
  readonly conditional?: true;
  /** The answer carries `Cache-Control: no-store` (credentials, one-time values). */
  readonly noStore?: true;
}

/**
 * What a call counts toward (CONTRACT: Usage and quotas). `none` says why
 * it counts toward nothing, so leaving metering out is a decision, not an omission.
 */
export type MeteringDecl =
  | { readonly unit: 'none'; readonly why: string }
  | { readonly unit: MeteredUnit; readonly estimate?: (body: unknown) => number };

/** Windowed quota kinds an operation other than an entity operation may count toward. */
export type MeteredUnit = 'read.monthly' | 'write.monthly' | 'webhook.deliveries.monthly' | 'authored.invocations.monthly' | 'authored.cpu_ms.monthly' | 'task.runs.monthly';

/** Announced stability (spec "Versioning"): Stable changes only additively, Beta may change with notice, Experimental any time. */
export type Stability = 'stable' | 'beta' | 'experimental' | 'deprecated';

/**
 * Reason codes of the 422s request validation answers. `prefix` builds
 * `<prefix>.InvalidBody` (not a JSON object), `.UnknownProperty`,
 * `.MissingProperty` and `.InvalidProperty`; `fields` names the reason of
 * an invalid or missing top-level field where the operation has its own
 * (`name` → `Branch.InvalidName`); `grants[]` names the reason of a problem
 * inside an item of the array `grants` (`ApiKey.InvalidGrant`), apart from the array's own.
 */
export interface ReasonDecl {
  readonly prefix: string;
  readonly fields?: Readonly<Record<string, string>>;
  /**
   * `properties`: of several problems, report an unknown top-level property first, then the
   * first top-level field in the schema's `properties` order that is missing or invalid, as
   * handlers that check their fields one after the other did. Default: unknown, then missing, then invalid.
   */
  readonly order?: 'properties';
}

/**
 * How a protocol's OpenAPI security is derived from `authn` and `scope`
 * (admin: admin token; public + project scope: scope headers only; public
 * without scope: nothing; user without scope: any credential alone), unless
 * the route says otherwise here.
 */
export type SecurityDecl = 'derived' | 'scope-only' | 'none' | 'any-credential';

/** An OpenAPI tag: the family an operation belongs to, described once. */
export interface TagDecl {
  readonly name: string;
  readonly description: string;
}

export interface OperationContract {
  readonly tag: TagDecl;
  readonly summary: string;
  readonly description?: string;
  readonly routes: readonly [RouteDecl, ...RouteDecl[]];
  /** Every `:name` of the routes, described. */
  readonly params?: Readonly<Record<string, ParamDecl>>;
  readonly query?: Readonly<Record<string, ParamDecl>>;
  /** Request headers the operation reads, described (`Last-Event-ID`, `If-None-Match`). */
  readonly headers?: Readonly<Record<string, ParamDecl>>;
  /** Shared parameters of components.parameters (`PageSize`, `Cursor`, `IdempotencyKey`). */
  readonly sharedParams?: readonly string[];
  /**
   * The request body's schema. Validated before the handler runs (compiled
   * once); 422 VALIDATION_FAILED naming the field. `optional`: an absent body is valid.
   */
  readonly body?: NamedSchema;
  readonly bodyOptional?: true;
  /** A body that is not JSON (`rawBody` specs): its media type, described as a string. */
  readonly rawBodyMediaType?: string;
  /**
   * What a raw body holds once the handler verified and parsed it (inbound
   * webhooks): documented under `rawBodyMediaType`, never validated before
   * the handler, which must check the bytes before it reads them.
   */
  readonly rawBodySchema?: NamedSchema;
  readonly reasons?: ReasonDecl;
  readonly output: OutputDecl;
  /** Error statuses the route may answer besides `default` (each with the error envelope). */
  readonly errors: readonly number[];
  readonly metering: MeteringDecl;
  readonly stability: Stability;
  readonly security?: SecurityDecl;
  /** CLI command name (`branches create`); default: derived from the first route. */
  readonly cli?: string;
}

/** What the derivations read of a declared operation (structural, so they need not import the operation layer). */
export interface DeclaredOperation {
  readonly id: string;
  readonly authn: Authn;
  readonly scope: 'none' | 'project';
  readonly contract: OperationContract;
}
