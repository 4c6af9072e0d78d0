import type { ExposureBinding } from '../publication/exposure-binding.js';
import type { ProjectModel } from '../publication/model.js';
import type { HandlerDef, HandlerSurface } from './types.js';

/** One handler as `GET /api/Explainability/authoredPublication` shows it. */
export interface ExplainedHandler {
  name: string;
  surface: HandlerSurface;
  source: string;
  sha256: string;
  bindings: string[];
}

export interface AuthoredPublicationView {
  publicationVersion: number;
  handlers: ExplainedHandler[];
}

/**
 * The capability id an operation handler's exposure bindings carry (CONTRACT "Operations":
 * the OpenAPI operationId): `Entity.<Entity>.<name>` for an instance operation,
 * `Operation.<name>` otherwise; null for a handler that is not an operation.
 */
export function capabilityIdOf(h: HandlerDef): string | null {
  if (h.operation === undefined) return null;
  const name = h.operation.name || h.name;
  return h.operation.entity === undefined ? `Operation.${name}` : `Entity.${h.operation.entity}.${name}`;
}

/**
 * What a publication binds of authored code: each handler it pins (by name) with the exact
 * bytes it runs (`sha256`) and the exposure bindings (every protocol's) that reach its
 * operation. Pure: computed from the publication's model and bindings, so bindings of
 * operation handlers appear as soon as the publication compiles them.
 */
export function explainAuthoredPublication(version: number, model: ProjectModel, bindings: readonly ExposureBinding[]): AuthoredPublicationView {
  const byCapability = new Map<string, string[]>();
  for (const b of bindings) {
    const list = byCapability.get(b.capabilityId);
    if (list === undefined) byCapability.set(b.capabilityId, [b.bindingId]);
    else list.push(b.bindingId);
  }
  const handlers = [...(model.handlers ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((h) => {
    const cap = capabilityIdOf(h);
    return { name: h.name, surface: h.surface, source: h.source, sha256: h.sha256, bindings: cap === null ? [] : [...(byCapability.get(cap) ?? [])] };
  });
  return { publicationVersion: version, handlers };
}
