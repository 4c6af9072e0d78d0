/**
 * One usage event (CONTRACT: Usage and quotas): append-only, one per
 * dispatched operation and kind (`read.monthly`, `write.monthly`,
 * `realtime.subscriptions`, `webhook.deliveries.monthly`, `<kind>.overage`).
 */
export interface UsageEvent {
  tenantId: string;
  projectId: string;
  kind: string;
  quantity: number;
  /** ISO 8601 UTC. */
  at: string;
  operationId: string;
  correlationId: string;
  dimensions?: Readonly<Record<string, string>>;
}

/** Where usage events go: buffered like audit rows, never awaited on the request path. */
export interface UsageSink {
  record(event: UsageEvent): void;
  flush(): Promise<void>;
}
