/**
 * The spec's capability surface kinds with their ordinals (Resources:
 * "Capability surface kinds (ordinal)"). The set is closed: projects cannot
 * add kinds, and a surface this platform reports is one of these.
 */
export const CAPABILITY_SURFACE_ORDINALS = {
  GovernedConnectionAdapter: 1, DatabaseInfrastructure: 2, RuntimeSubstrate: 3, Distribution: 4, AnalyticsSubstrate: 5,
  StorageInfrastructure: 6, CacheInfrastructure: 7, ModelInferenceAdapter: 8, SecretProviderSurface: 9,
  WireSurface: 20, OperationProjectionSurface: 21, SdkSurface: 22, CommandSurface: 23, ToolSurface: 24, UiProjectionSurface: 25,
  EventVocabularySurface: 40, SubscriptionSurface: 41, WebhookSurface: 42, RealtimeSurface: 43, SchedulingHandlerSurface: 44,
  TriggerSurface: 45, WorkflowSurface: 46, AutomationActionSurface: 47, AgentSkillSurface: 48, EmailTransportSurface: 49,
  SmsTransportSurface: 50, DistributionPublicationSurface: 51,
  SourceAssetSurface: 60, AnalyticsSurface: 61,
  IdentityProviderSurface: 80, AuthSchemeSurface: 81, BillingMeterSurface: 82, GovernancePolicySurface: 83,
  AuthoredRuntimeSurface: 100, SandboxSurface: 101,
  ObservabilitySurface: 120, ExplainabilitySurface: 121,
} as const;
export type CapabilitySurfaceKind = keyof typeof CAPABILITY_SURFACE_ORDINALS;
