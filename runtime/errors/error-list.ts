import { ServiceError } from './service-error.js';

export interface FieldProblem {
  field: string;
  reasonCode: string;
  message: string;
}

/** Problems listed in one error envelope; the rest are only counted (`errorCount`, `truncated`). */
export const MAX_LISTED_ERRORS = 100;

/**
 * Collects validation problems for one 422 with a bound on what it keeps:
 * a body with 700,000 unknown keys must not answer 700,000 entries (tens of
 * megabytes, seconds of event loop). Past the bound a problem is counted,
 * not built: callers check `full` to skip work whose only product is a message.
 */
export class ErrorList {
  readonly listed: FieldProblem[] = [];
  count = 0;

  get full(): boolean {
    return this.listed.length >= MAX_LISTED_ERRORS;
  }

  add(problem: FieldProblem | (() => FieldProblem)): void {
    this.count++;
    if (!this.full) this.listed.push(typeof problem === 'function' ? problem() : problem);
  }

  /** Counts `n` more problems of a kind already listed or left out. */
  countMore(n: number): void {
    this.count += n;
  }

  /** The 422 naming the first problem, with the list; null when nothing was found. */
  toError(): ServiceError | null {
    if (this.count === 0) return null;
    const first = this.listed[0]!;
    return new ServiceError('VALIDATION_FAILED', first.reasonCode, first.message, { field: first.field, errors: this.listed, errorCount: this.count });
  }
}
