import { createHash } from 'node:crypto';
import { quoteIdent } from '../../storage/index.js';

const MAX_IDENT = 63;

/** SQL schema of one project branch: p_<project uuid hex>_<branch>. */
export const branchSchemaName = (projectId: string, branch: string): string => `p_${projectId.replace(/-/g, '')}_${branch}`;

export const qualifiedTable = (schema: string, entityName: string): string => `${quoteIdent(schema)}.${quoteIdent(entityName)}`;

/**
 * Constraint and index names, kept under PostgreSQL's 63-byte limit so the
 * database never truncates them (we map violations back to fields by name).
 */
export function constraintName(entityName: string, fieldName: string, suffix: 'key' | 'fkey' | 'check' | 'idx'): string {
  const plain = `${entityName}_${fieldName}_${suffix}`;
  if (plain.length <= MAX_IDENT) return plain;
  const hash = createHash('sha256').update(plain).digest('hex').slice(0, 10);
  return `${entityName.slice(0, 30)}_${hash}_${suffix}`;
}
