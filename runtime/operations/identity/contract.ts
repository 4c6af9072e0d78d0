import type { MeteringDecl, OperationContract, TagDecl } from '../contract/index.js';

/** The tag of the project identity routes (register, login, tokens, sessions, federation, step-up, API keys, grants, providers). */
export const IDENTITY_TAG: TagDecl = { name: 'Identity', description: 'Project identity: registration, login, tokens, sessions.' };

/** Identity calls count toward no windowed quota; login failures have their own throttle (runtime/identity/login-throttle.ts). */
export const IDENTITY_UNMETERED: MeteringDecl = { unit: 'none', why: 'identity: sign-in, sessions and credentials are not metered units (CONTRACT: Usage and quotas); failed logins are throttled instead' };

type IdentityContract = Omit<OperationContract, 'tag' | 'metering' | 'stability'> & Partial<Pick<OperationContract, 'tag'>>;

/** A contract of the identity family: tag Identity unless given, unmetered, stable. */
export const identityContract = (c: IdentityContract): OperationContract => ({ tag: IDENTITY_TAG, metering: IDENTITY_UNMETERED, stability: 'stable', ...c });
