/** HTTP helpers of the scheduling suites (CONTRACT "Scheduling"). */
import type { Client } from '../support/client.js';
import { controlData } from '../control/support.js';
import { publishHandler } from '../authored/publish.js';

export const DEFINITIONS = '/api/scheduling/taskdefinition';

/** `POST /api/scheduling/taskdefinition` → the created definition record (asserts 201). */
export async function createDefinition(c: Client, body: Record<string, unknown>): Promise<any> {
  return controlData(await c.post(DEFINITIONS, body), 201, 'TaskDefinition', 'created');
}

/** `POST …/taskdefinition/{id}/triggers` → the created trigger record (asserts 201). */
export async function addTrigger(c: Client, definitionId: string, body: Record<string, unknown>): Promise<any> {
  return controlData(await c.post(`${DEFINITIONS}/${definitionId}/triggers`, body), 201, 'TaskTrigger', 'created');
}

/** Publishes a background handler (ScheduledJob by default; no operation) of the given source and returns its record. */
export function publishJob(c: Client, name: string, code: string, surface = 'ScheduledJob', grants?: string[]): Promise<any> {
  return publishHandler(c, { name, code, surface, ...(grants === undefined ? {} : { grants }) });
}
