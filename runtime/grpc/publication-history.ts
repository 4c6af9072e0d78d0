import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { ProjectModel } from '../publication/model.js';
import type { PublicationRecord } from '../publication/record.js';
import { FieldNumbering } from './field-numbers.js';

/** Versions read per query while walking a long history. */
const PAGE = 100;

/**
 * Field numbering for a publication: every earlier version of its branch,
 * in order, then the publication itself. Run once per publication per node
 * (schema.ts caches the result).
 */
export async function numberingOf(db: SqlExecutor, record: PublicationRecord): Promise<FieldNumbering> {
  const numbering = new FieldNumbering();
  let after = 0;
  for (;;) {
    const res = await db.query<{ version: string; model: ProjectModel }>(
      `SELECT version, model FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1 AND branch = $2 AND version > $3 AND version < $4 ORDER BY version LIMIT ${PAGE}`,
      [record.projectId, record.branch, after, record.version],
    );
    for (const row of res.rows) numbering.add(row.model);
    if (res.rows.length < PAGE) break;
    after = Number(res.rows[res.rows.length - 1]!.version);
  }
  numbering.add(record.model);
  return numbering;
}
