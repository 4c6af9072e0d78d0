import { createHash } from 'node:crypto';
import type { ProjectModel } from './model.js';

/** Deterministic JSON: object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Hash of what a publication serves: the model and its branch, not when it was made. */
export const modelHash = (model: ProjectModel): string => `sha256:${sha256Hex(canonicalJson(model))}`;
