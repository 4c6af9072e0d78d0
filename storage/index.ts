export type { SqlClient, SqlExecutor, QueryResult } from './sql-client.js';
export { MAX_SQL_PARAMS } from './sql-client.js';
export { PgClient } from './pg-client.js';
export { PgliteClient, PGLITE_DEFAULT_SHARED_BUFFERS_MB } from './pglite-client.js';
export { SQLSTATE, sqlstateOf, isDatabaseError, isConnectionError, type DatabaseErrorLike } from './sql-errors.js';
export { migratePlatform, PLATFORM_SCHEMA, LATEST_PLATFORM_VERSION } from './migrations.js';
export { quoteIdent, quoteLiteral } from './quote.js';
