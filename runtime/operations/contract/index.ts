/** Operation contracts: declared once per operation, everything else derived (docs/architecture.md, "Declaring an operation"). */
export type {
  Authn, DeclaredOperation, HttpMethod, Json, MeteringDecl, MeteredUnit, NamedSchema, OperationContract, OutputDecl, ParamDecl, ReasonDecl,
  RouteDecl, SecurityDecl, Stability, TagDecl,
} from './types.js';
export { defineSchemas, ref, registeredSchema, registeredSchemas, reachableSchemaNames } from './schemas.js';
export { firstError, validateBody } from './validate-body.js';
export { declaredOpenApi, openApiPathOf, operationIdOf, type DeclaredOpenApi } from './openapi.js';
export { declaredCommands, commandNameOf, type CliCommand } from './cli.js';
export { CONTROL_PLANE_UNMETERED, READ_ERRORS, WRITE_ERRORS } from './common.js';
export { answerMismatch, enforceAnswer } from './check-answer.js';
