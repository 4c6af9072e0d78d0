import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import type { EntityDef, ProjectModel } from '../publication/model.js';

const S = PLATFORM_SCHEMA;

/** The environment every request without `X-Service-Branch` is served by (CONTRACT "Deployments"). */
export const PRODUCTION = 'production';

/** An environment's pin as stored; null fields mean "main's head". */
export interface EnvironmentRow {
  pinned_branch: string;
  pinned_version: string;
  pinned_head: string;
  ramp_branch: string | null;
  ramp_version: string | null;
  ramp_percent: number;
}

export async function readEnvironment(db: SqlExecutor, projectId: string, environment: string): Promise<EnvironmentRow | null> {
  const res = await db.query<EnvironmentRow>(
    `SELECT pinned_branch, pinned_version, pinned_head, ramp_branch, ramp_version, ramp_percent FROM ${S}.environments WHERE project_id = $1 AND name = $2`,
    [projectId, environment],
  );
  return res.rows[0] ?? null;
}

/**
 * The pin that decides what `environment` serves now, or null when it serves main's head: a pin
 * holds only while main's head is the one it was made on (every schema change on main deploys
 * at once, CONTRACT "Deployments").
 */
export async function pinInEffect(db: SqlExecutor, projectId: string, environment: string, mainHeadVersion: number): Promise<EnvironmentRow | null> {
  const env = await readEnvironment(db, projectId, environment);
  return env !== null && Number(env.pinned_head) === mainHeadVersion ? env : null;
}

/**
 * The ramp rule: a request goes to the new publication when FNV-1a (32 bit,
 * over the UTF-16 code units) of its correlation id mod 100 is below the
 * current percentage. Deterministic, so a retried request with the same id
 * lands on the same side.
 */
export function rampBucket(correlationId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < correlationId.length; i++) {
    h ^= correlationId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % 100;
}

/**
 * Whether a publication's model can serve on main's SQL schema as it is now
 * (main's head model): every entity and field it names exists there with the
 * same type, and every column it does not know can be left out of an insert.
 * Returns the first problem, or null. A deployment or rollback to a model that
 * is not servable is refused (409): the schema journal's rollback changes
 * tables, a deployment only changes which publication serves them.
 */
export function servableProblem(target: ProjectModel, head: ProjectModel): string | null {
  const heads = new Map<string, EntityDef>(head.entities.map((e) => [e.entityName, e]));
  for (const e of target.entities) {
    const h = heads.get(e.entityName);
    if (h === undefined) return `entity '${e.entityName}' has no table on main`;
    for (const f of e.fields) {
      const hf = h.fields.find((x) => x.name === f.name);
      if (hf === undefined) return `field '${e.entityName}.${f.name}' has no column on main`;
      if (hf.type !== f.type || hf.references !== f.references) return `field '${e.entityName}.${f.name}' has another type on main`;
    }
    for (const hf of h.fields) {
      if (!e.fields.some((f) => f.name === hf.name) && !hf.nullable && hf.default === null) return `column '${e.entityName}.${hf.name}' is required on main`;
    }
  }
  return null;
}
