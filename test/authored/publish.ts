import type { Client, Reply } from '../support/client.js';
import { controlData } from '../control/support.js';

/** A handler to publish: its source file's content and the declaration's other members. */
export interface HandlerSpec {
  name: string;
  code: string;
  surface?: string;
  /** Source-asset path; default `handlers/<name>.js`. */
  path?: string;
  operation?: Record<string, unknown>;
  limits?: Record<string, number>;
  grants?: string[];
}

const OPERATION_SURFACES = ['CoreHandler', 'EdgeHandler', 'ManagementHandler'];

/** Writes the source file and declares the handler (a project operation of its name unless `operation` says otherwise). */
export async function publishHandler(c: Client, h: HandlerSpec): Promise<any> {
  const path = h.path ?? `handlers/${h.name}.js`;
  controlData(await c.post('/api/SourceAsset/file', { path, content: h.code }), 201);
  const surface = h.surface ?? 'CoreHandler';
  // A background handler (ScheduledJob, EventConsumer, WebhookHandler, DurableWorkflow) has no operation.
  const operates = OPERATION_SURFACES.includes(surface);
  const body = {
    name: h.name, surface, source: path,
    ...(h.operation !== undefined || operates ? { operation: h.operation ?? { input: { type: 'object' } } } : {}),
    ...(h.limits === undefined ? {} : { limits: h.limits }),
    ...(h.grants === undefined ? {} : { grants: h.grants }),
  };
  return controlData(await c.post('/api/Schema/handlers', body), 201);
}

/** Calls a project operation. */
export const invoke = (c: Client, name: string, input: unknown = {}): Promise<Reply> => c.post(`/api/operations/${name}`, input);
