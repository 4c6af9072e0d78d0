/**
 * The closed table of error codes. Adding a code breaks the build until every
 * protocol projection below maps it (Record<ErrorCode, …> is exhaustive).
 */
export const ERROR_CODES = [
  'UNAUTHORIZED',
  'ACCESS_DENIED',
  'NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'METHOD_NOT_ALLOWED',
  'VALIDATION_FAILED',
  'QUOTA_EXCEEDED',
  'UPSTREAM_TIMEOUT',
  'UNAVAILABLE',
  'INTERNAL',
  'BRIDGE_ERROR',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** HTTP status per code (REST projection). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  METHOD_NOT_ALLOWED: 405,
  VALIDATION_FAILED: 422,
  QUOTA_EXCEEDED: 429,
  UPSTREAM_TIMEOUT: 504,
  UNAVAILABLE: 503,
  INTERNAL: 500,
  // Authored code failed (CONTRACT "Operations" Failures); a limit of time answers 504 instead (BRIDGE_TIMEOUT_REASONS).
  BRIDGE_ERROR: 502,
};

/** gRPC status codes (numeric, from grpc/status.proto) for the gRPC projection. */
export const GRPC_STATUS: Record<ErrorCode, number> = {
  UNAUTHORIZED: 16, // UNAUTHENTICATED
  ACCESS_DENIED: 7, // PERMISSION_DENIED
  NOT_FOUND: 5,
  CONFLICT: 6, // ALREADY_EXISTS / ABORTED: we use ALREADY_EXISTS for unique and FK conflicts
  PAYLOAD_TOO_LARGE: 8, // RESOURCE_EXHAUSTED
  UNSUPPORTED_MEDIA_TYPE: 3, // INVALID_ARGUMENT
  METHOD_NOT_ALLOWED: 12, // UNIMPLEMENTED
  VALIDATION_FAILED: 3,
  QUOTA_EXCEEDED: 8,
  UPSTREAM_TIMEOUT: 4, // DEADLINE_EXCEEDED
  UNAVAILABLE: 14,
  INTERNAL: 13,
  BRIDGE_ERROR: 13, // INTERNAL; a time limit is DEADLINE_EXCEEDED (runtime/grpc/status.ts)
};

/** GraphQL `extensions.code` is the code itself; listed so a rename is a compile error. */
export const GRAPHQL_CODE: Record<ErrorCode, string> = Object.fromEntries(
  ERROR_CODES.map((c) => [c, c]),
) as Record<ErrorCode, string>;

/** MCP JSON-RPC error codes (CONTRACT: MCP errors): -32003 for access denied (fixed by the spec), -32000 for every other canonical error. */
export const MCP_CODE: Record<ErrorCode, number> = {
  UNAUTHORIZED: -32000,
  ACCESS_DENIED: -32003,
  NOT_FOUND: -32000,
  CONFLICT: -32000,
  PAYLOAD_TOO_LARGE: -32000,
  UNSUPPORTED_MEDIA_TYPE: -32000,
  METHOD_NOT_ALLOWED: -32000,
  VALIDATION_FAILED: -32000,
  QUOTA_EXCEEDED: -32000,
  UPSTREAM_TIMEOUT: -32000,
  UNAVAILABLE: -32000,
  INTERNAL: -32000,
  BRIDGE_ERROR: -32000,
};

/** Whether a caller may retry the same request unchanged. */
export const RETRYABLE: Record<ErrorCode, boolean> = {
  UNAUTHORIZED: false,
  ACCESS_DENIED: false,
  NOT_FOUND: false,
  CONFLICT: false,
  PAYLOAD_TOO_LARGE: false,
  UNSUPPORTED_MEDIA_TYPE: false,
  METHOD_NOT_ALLOWED: false,
  VALIDATION_FAILED: false,
  QUOTA_EXCEEDED: false,
  UPSTREAM_TIMEOUT: true,
  UNAVAILABLE: true,
  INTERNAL: false,
  BRIDGE_ERROR: false,
};

/** BRIDGE_ERROR reasons that are a handler's time limit: HTTP 504, gRPC DEADLINE_EXCEEDED (CONTRACT "Operations" Failures). */
export const BRIDGE_TIMEOUT_REASONS: ReadonlySet<string> = new Set(['Handler.CpuLimit', 'Handler.WallClockLimit']);
