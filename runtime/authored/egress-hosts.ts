import { isIP } from 'node:net';
import { PLATFORM_SCHEMA, type SqlExecutor } from '../../storage/index.js';
import { validationFailed } from '../errors/service-error.js';

const S = PLATFORM_SCHEMA;

/** At most this many entries per project: an allow-list is a short list of named partners, not a crawl frontier. */
export const MAX_ALLOWED_HOSTS = 100;
/** DNS names: dot-separated labels of letters, digits and inner hyphens, at most 253 characters (an IPv4 literal is one too). */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
export const HOST_NAME_PATTERN = `^(?:${LABEL})(?:\\.${LABEL})*$`;
const HOST_NAME = new RegExp(HOST_NAME_PATTERN);

/**
 * One allow-list entry as stored and matched: lower case; a DNS name or IPv4 literal, or an
 * IPv6 literal in brackets (`[::1]`, the form `URL.hostname` has). No port (entries match on
 * any port), no scheme, no path, no wildcard: anything else → 422 `Egress.InvalidHost`.
 */
export function normalizeHost(raw: unknown, field: string): string {
  if (typeof raw !== 'string') throw validationFailed('Egress.InvalidHost', 'a host is a string', field);
  const h = raw.trim().toLowerCase().replace(/\.$/, '');
  if (h.startsWith('[') && h.endsWith(']') && isIP(h.slice(1, -1)) === 6) return `[${new URL(`http://${h}/`).hostname.slice(1, -1)}]`;
  if (h.length === 0 || h.length > 253 || !HOST_NAME.test(h)) {
    throw validationFailed('Egress.InvalidHost', `'${raw.slice(0, 64)}' is not a host name (no scheme, port, path or wildcard; an IPv6 literal in brackets)`, field);
  }
  return h;
}

/** The body of `PUT /api/AuthoredRuntime/egress`: entries normalized, duplicates dropped, first-seen order kept. */
export function readAllowedHosts(body: unknown): string[] {
  const list = (body as { allowedHosts?: unknown }).allowedHosts;
  if (!Array.isArray(list)) throw validationFailed('Egress.InvalidHost', '`allowedHosts` is a list of host names', 'allowedHosts');
  if (list.length > MAX_ALLOWED_HOSTS) throw validationFailed('Egress.TooManyHosts', `at most ${MAX_ALLOWED_HOSTS} hosts`, 'allowedHosts');
  const out = new Set<string>();
  list.forEach((h, i) => out.add(normalizeHost(h, `allowedHosts[${i}]`)));
  return [...out];
}

export interface EgressPolicy {
  allowedHosts: string[];
  updatedAt: string | null;
}

/** The project's allow-list; a project that never set one has none (no egress at all). */
export async function readEgress(db: SqlExecutor, projectId: string): Promise<EgressPolicy> {
  const r = await db.query<{ allowed_hosts: string[] | string; updated_at: string | Date }>(
    `SELECT allowed_hosts, updated_at FROM ${S}.authored_egress WHERE project_id = $1`, [projectId],
  );
  const row = r.rows[0];
  if (row === undefined) return { allowedHosts: [], updatedAt: null };
  const hosts = typeof row.allowed_hosts === 'string' ? (JSON.parse(row.allowed_hosts) as string[]) : row.allowed_hosts;
  return { allowedHosts: hosts, updatedAt: new Date(row.updated_at).toISOString() };
}

/** Replaces the project's allow-list whole (PUT semantics). */
export async function writeEgress(db: SqlExecutor, projectId: string, hosts: readonly string[]): Promise<EgressPolicy> {
  const r = await db.query<{ updated_at: string | Date }>(
    `INSERT INTO ${S}.authored_egress (project_id, allowed_hosts, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (project_id) DO UPDATE SET allowed_hosts = excluded.allowed_hosts, updated_at = now() RETURNING updated_at`,
    [projectId, JSON.stringify(hosts)],
  );
  return { allowedHosts: [...hosts], updatedAt: new Date(r.rows[0]!.updated_at).toISOString() };
}
