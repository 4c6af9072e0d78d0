import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

const noted = new Set<string>();

/**
 * Notes, once per process, that an answer of this operation was checked
 * against its contract: npm test's runner sums the notes of every suite into
 * the coverage of the answer check (scripts/run-tests.ts).
 */
export function noteCheckedAnswer(dir: string, operationId: string): void {
  if (noted.has(operationId)) return;
  noted.add(operationId);
  appendFileSync(join(dir, `${process.pid}.log`), `${operationId}\n`);
}
