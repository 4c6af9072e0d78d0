import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';

/**
 * The version the project's next publication gets, on whichever branch: one
 * counter per project (CONTRACT "Branches"), above every earlier publication
 * of every branch. Only the Project actor assigns it, so two never race.
 */
export async function nextPublicationVersion(db: SqlExecutor, projectId: string, headVersion: number): Promise<number> {
  const top = await db.query<{ v: string | number }>(`SELECT COALESCE(MAX(version), 0) AS v FROM ${PLATFORM_SCHEMA}.publications WHERE project_id = $1`, [projectId]);
  return Math.max(headVersion, Number(top.rows[0]!.v)) + 1;
}
