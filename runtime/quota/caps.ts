import { validationFailed } from '../errors/service-error.js';
import type { GovernanceSource } from '../services.js';
import type { QuotaFields } from './body.js';

/**
 * Governance caps on quotas (envelope `maxQuotas`, docs/usage.md "Governance
 * caps"): the most a project under the envelope may consume per kind, the
 * smallest along its ancestry. Empty when no envelope in the chain sets one.
 */
export async function quotaCapsOf(governance: GovernanceSource, projectId: string): Promise<Readonly<Record<string, number>>> {
  const env = await governance.effective(projectId);
  return env?.effective.maxQuotas ?? {};
}

/** A quota whose limit passes its kind's cap is refused at write time (422, nothing written). */
export async function checkQuotaCap(governance: GovernanceSource, projectId: string, fields: QuotaFields): Promise<QuotaFields> {
  const cap = (await quotaCapsOf(governance, projectId))[fields.kind];
  if (cap !== undefined && fields.limit > cap) {
    throw validationFailed('Governance.EnvelopeExceeded', `the governance envelope caps ${fields.kind} at ${cap}`, 'limit');
  }
  return fields;
}
