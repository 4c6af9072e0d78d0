import { readFileSync } from 'node:fs';
import { MIGRATIONS } from '../../storage/platform-migrations/index.js';

/** The package version of this build (package.json), read once; a copy without it reports 0.0.0. */
function packageVersion(): string {
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const v = (JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: unknown }).version;
      if (typeof v === 'string') return v;
    } catch {
      // not at this depth (dist/ or source layout)
    }
  }
  return '0.0.0';
}

export const PLATFORM_VERSION = packageVersion();
export const API_VERSIONS = ['v1'] as const;
/** The platform migration level this build brings its storage to. */
export const PLATFORM_SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;
export const PROTOCOLS = ['rest', 'graphql', 'realtime', 'webhooks', 'mcp', 'grpc'] as const;
/** A protocol this build serves; closed, so a `Record<ProtocolName, …>` breaks the build until it handles a new one. */
export type ProtocolName = (typeof PROTOCOLS)[number];
