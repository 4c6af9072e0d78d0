import { randomUUID } from 'node:crypto';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';

const S = PLATFORM_SCHEMA;

/**
 * This node's claim on the deployments it drives (docs/proposals-and-deployments.md
 * "Recovery"). The driver renews the lease while it holds a ramp step or bakes; another
 * node may end an in-flight deployment only once the lease has expired, so a deployment
 * whose driver is alive is never taken over.
 */
export interface DriverLease {
  readonly nodeId: string;
  /** `<nodeId>/<incarnation>`: a node restarted with the same NODE_ID is another holder, and knows the old one is dead. */
  readonly holder: string;
  /** How long a silent driver keeps its deployments. */
  readonly ttlMs: number;
}

/** DEPLOYMENT_LEASE_MS default: a dead driver's deployment is reverted within this (plus one sweep). */
export const DEFAULT_DEPLOYMENT_LEASE_MS = 15_000;

export const driverLease = (nodeId: string, ttlMs = DEFAULT_DEPLOYMENT_LEASE_MS): DriverLease => ({ nodeId, holder: `${nodeId}/${randomUUID().slice(0, 8)}`, ttlMs });

/** The driver renews this often: two renewals may be late before the lease lapses. */
export const renewEveryMs = (lease: DriverLease): number => Math.max(100, Math.floor(lease.ttlMs / 3));

/** SQL for "now + the lease", on the database clock so that node clocks do not matter. `$n` is the TTL in ms. */
export const leaseUntil = (param: string): string => `now() + (${param}::int * interval '1 millisecond')`;

/**
 * SQL condition: the deployment's driver is gone. Its lease expired (or it never had
 * one: rows from before migration 24), or it is held by an earlier life of this very node
 * (same NODE_ID, another incarnation; a NODE_ID names one process of the cluster).
 * `nodeParam`/`holderParam` are this node's id and holder.
 */
export const driverGoneSql = (nodeParam: string, holderParam: string): string =>
  `(lease_expires_at IS NULL OR lease_expires_at < now() OR (regexp_replace(driver, '/[^/]*$', '') = ${nodeParam} AND driver <> ${holderParam}))`;

/** Extends the lease of a deployment this node drives; false once it left the in-flight states (or is not ours). */
export async function renewLease(db: SqlExecutor, id: string, lease: DriverLease): Promise<boolean> {
  const res = await db.query(
    `UPDATE ${S}.deployments SET lease_expires_at = ${leaseUntil('$3')} WHERE id = $1 AND driver = $2 AND state IN ('pending', 'ramping', 'baking')`,
    [id, lease.holder, lease.ttlMs],
  );
  return (res.rowCount ?? 0) > 0;
}
