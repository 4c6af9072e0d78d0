/**
 * Foundation profiles a self-hosted platform offers: named, versioned
 * baselines a project pins itself to (docs/versioning-and-records.md). A
 * foundation lists the platform capabilities its version guarantees; an
 * upgrade moves a project's pin from one version of its profile to another.
 */
export interface Foundation {
  profileName: string;
  foundationVersion: string;
  /** The platform migration level the foundation needs. */
  minPlatformSchema: number;
  capabilities: readonly string[];
}

const CORE = ['rest', 'openapi', 'realtime', 'webhooks', 'identity', 'governance', 'quotas'];

export const FOUNDATIONS: readonly Foundation[] = [
  { profileName: 'standard', foundationVersion: '1.0.0', minPlatformSchema: 13, capabilities: [...CORE, 'graphql'] },
  { profileName: 'standard', foundationVersion: '1.1.0', minPlatformSchema: 18, capabilities: [...CORE, 'graphql', 'mcp'] },
  { profileName: 'standard', foundationVersion: '1.2.0', minPlatformSchema: 19, capabilities: [...CORE, 'graphql', 'mcp', 'versioning'] },
  { profileName: 'minimal', foundationVersion: '1.0.0', minPlatformSchema: 13, capabilities: ['rest', 'openapi', 'identity'] },
];

export const findFoundation = (profileName: string, version: string): Foundation | undefined =>
  FOUNDATIONS.find((f) => f.profileName === profileName && f.foundationVersion === version);

export const latestFoundation = (profileName: string): Foundation | undefined =>
  FOUNDATIONS.filter((f) => f.profileName === profileName).at(-1);

/** An upgrade's steps: the capabilities the move adds and removes. */
export function upgradeSteps(from: Foundation | undefined, to: Foundation): Array<{ action: 'add' | 'remove'; capability: string }> {
  const before = new Set(from?.capabilities ?? []);
  const after = new Set(to.capabilities);
  return [
    ...to.capabilities.filter((c) => !before.has(c)).map((capability) => ({ action: 'add' as const, capability })),
    ...[...before].filter((c) => !after.has(c)).map((capability) => ({ action: 'remove' as const, capability })),
  ];
}
