import { isConnectionError, isDatabaseError, SQLSTATE } from '../../storage/index.js';
import { ServiceError } from '../errors/service-error.js';
import type { CompiledEntity } from './compiled-entity.js';

/** A lost storage connection: a retryable 503 (the request's transaction rolled back, nothing half-applied). */
export const storageUnavailable = (cause: unknown): ServiceError =>
  new ServiceError('UNAVAILABLE', 'Storage.Unavailable', 'storage connection lost; retry the request', { retryable: true }, cause);

/**
 * Maps a database failure during an entity operation to a declared error.
 * Anything not recognised is rethrown unchanged and masked at the edge.
 * `action` tells a foreign-key failure on write (bad reference → 422) from
 * one on delete (rows still point here → 409).
 */
export function mapEntitySqlError(entity: CompiledEntity, err: unknown, action: 'write' | 'delete'): unknown {
  if (ServiceError.is(err)) return err;
  if (isConnectionError(err)) return storageUnavailable(err);
  if (!isDatabaseError(err)) return err;
  const reason = (r: string): string => `${entity.entityName}Validation.${r}`;
  const field = err.constraint === undefined ? undefined : entity.fieldOfConstraint.get(err.constraint);
  const withField = field === undefined ? {} : { field };
  switch (err.code) {
    case SQLSTATE.UNIQUE_VIOLATION:
      return new ServiceError('CONFLICT', reason('UniqueViolation'), `another ${entity.entityName} already has this ${field ?? 'value'}`, withField);
    case SQLSTATE.RESTRICT_VIOLATION:
    case SQLSTATE.FOREIGN_KEY_VIOLATION:
      return action === 'delete'
        ? new ServiceError('CONFLICT', reason('ReferencedByOtherRows'), `${entity.entityName} is still referenced by other rows`)
        : new ServiceError('VALIDATION_FAILED', reason('ReferenceNotFound'), `referenced row does not exist${field === undefined ? '' : ` for '${field}'`}`, withField);
    case SQLSTATE.NOT_NULL_VIOLATION:
      return new ServiceError('VALIDATION_FAILED', reason('Required'), 'a required field is missing', err.column === undefined ? {} : { field: err.column });
    case SQLSTATE.CHECK_VIOLATION:
      return new ServiceError('VALIDATION_FAILED', reason('InvalidValue'), `value not allowed${field === undefined ? '' : ` for '${field}'`}`, withField);
    case SQLSTATE.INVALID_TEXT_REPRESENTATION:
    case SQLSTATE.NUMERIC_OUT_OF_RANGE:
    case SQLSTATE.DATETIME_OUT_OF_RANGE:
    case SQLSTATE.INVALID_DATETIME_FORMAT:
      return new ServiceError('VALIDATION_FAILED', reason('InvalidValue'), 'a value is out of range or malformed');
    case SQLSTATE.UNDEFINED_TABLE:
      return new ServiceError('UNAVAILABLE', 'Publication.Changed', 'the schema changed during the request; retry', { retryable: true });
    case '54000': // program_limit_exceeded: a value too large for its (unique) index
      return new ServiceError('VALIDATION_FAILED', reason('InvalidValue'), `value too large to index${field === undefined ? '' : ` for '${field}'`}`, withField);
    default:
      // Class 22 (data exception) is always about a value the request carried.
      if (err.code.startsWith('22')) return new ServiceError('VALIDATION_FAILED', reason('InvalidValue'), 'a value is out of range or malformed');
      return err;
  }
}
