import type { SqlClient } from '../../storage/index.js';
import { readHead } from '../control/schema-change.js';
import { advance, writePin } from './deployment-store.js';
import { renewEveryMs, renewLease, type DriverLease } from './deployment-lease.js';

/** What a deployment moves production to: a stored publication (its own branch, as recorded). */
export interface DeployTarget {
  branch: string;
  version: number;
}

export interface DriveInput {
  id: string;
  projectId: string;
  environment: string;
  from: DeployTarget;
  target: DeployTarget;
  ramp: number[] | null;
  bake: number;
  /** This node's lease: renewed while a step is held, checked by every step. */
  lease: DriverLease;
  /** Drops this node's cached serving state (and, in cluster mode, every node's). */
  invalidate: () => void;
}

/** Each ramp percentage but the last is held this long (CONTRACT: at least 1 s). */
export const RAMP_HOLD_MS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Waits `ms` while renewing the lease, so no other node's recovery takes the deployment
 * over; false as soon as the deployment is no longer in flight under this lease (a rollback,
 * or a recovery after this node stalled past its lease). A failed renewal (a database blip)
 * is not fatal: the next one or the next step decides.
 */
async function holdFor(db: SqlClient, d: DriveInput, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (let left = ms; left > 0; left = end - Date.now()) {
    await sleep(Math.min(left, renewEveryMs(d.lease)));
    const held = await renewLease(db, d.id, d.lease).catch(() => true);
    if (!held) return false;
  }
  return true;
}

/**
 * Runs a deployment's states on the node that accepted it: ramp (production's
 * pin stays `from`, `target` serves the current share), switch (the pin moves
 * to `target`), bake, succeeded. Every step is conditional on the deployment
 * still being in flight and driven by this node's lease, so a rollback (or a
 * recovery) stops it between steps. Each step is one transaction: the
 * deployment's state and the environment's pin move together. If this node dies,
 * another start or sweep reverts it (deployment-recovery.ts).
 */
export async function driveDeployment(db: SqlClient, d: DriveInput): Promise<void> {
  const step = async (state: 'ramping' | 'baking' | 'succeeded', pinOf: (head: number) => Parameters<typeof writePin>[3] | null, serving?: number): Promise<boolean> => {
    const moved = await db.transaction(async (tx) => {
      if (!(await advance(tx, d.id, d.lease, state, serving))) return false;
      const head = (await readHead(tx, d.projectId, 'main', false)).version;
      const pin = pinOf(head);
      if (pin !== null) await writePin(tx, d.projectId, d.environment, pin);
      return true;
    });
    if (moved) d.invalidate();
    return moved;
  };
  try {
    const ramp = d.ramp ?? [];
    for (let i = 0; i < ramp.length; i++) {
      const percent = ramp[i]!;
      if (percent >= 100) break;
      if (!(await step('ramping', (head) => ({ branch: d.from.branch, version: d.from.version, head, ramp: { ...d.target, percent } })))) return;
      if (!(await holdFor(db, d, RAMP_HOLD_MS))) return;
    }
    const pinTarget = (head: number) => ({ branch: d.target.branch, version: d.target.version, head, ramp: null });
    if (d.bake > 0) {
      if (!(await step('baking', pinTarget, d.target.version))) return;
      if (!(await holdFor(db, d, d.bake * 1000))) return;
      await step('succeeded', () => null);
    } else {
      await step('succeeded', pinTarget, d.target.version);
    }
  } catch {
    // A storage failure mid-way: the pin is whole (each step is one transaction); the deployment is failed.
    await advance(db, d.id, d.lease, 'failed').catch(() => undefined);
  }
}
