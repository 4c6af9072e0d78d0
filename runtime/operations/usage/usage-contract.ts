import type { MeteringDecl, OperationContract, TagDecl } from '../contract/index.js';

export const USAGE_TAG: TagDecl = { name: 'Usage', description: 'Metering and quotas of a project (docs/usage.md); platform admin only.' };

/**
 * Reading usage or managing quotas consumes nothing (runtime/usage/meter.ts meters entity,
 * realtime and webhook work only): otherwise an exhausted quota would lock the admin out of raising it.
 */
export const USAGE_UNMETERED: MeteringDecl = { unit: 'none', why: 'usage and quota administration: an exhausted quota must never block raising it' };

export type UsageContract = Omit<OperationContract, 'tag' | 'metering' | 'stability'>;

/** A usage or quota operation's contract: the `Usage` tag, unmetered, stable. */
export const usageContract = (c: UsageContract): OperationContract => ({ tag: USAGE_TAG, metering: USAGE_UNMETERED, stability: 'stable', ...c });
