/** Server policy modes, drift handling, and the parsed shapes of the gateway file and pin files. */
export type {
  Mode,
  OnDrift,
  OnDriftSetting,
  ValidateConfig,
  DriftAction,
  DriftPolicy,
  HttpTransport,
  UpstreamConfig,
  HttpUpstreamConfig,
  StdioUpstreamConfig,
  PinConfig,
  SurfacePinConfig,
  ServerConfig,
  PinnedCatalog,
  GatewayConfig,
  CorsConfig,
  AggregateConfig,
  PrincipalConfig,
  ServerScopeConfig,
  ScopeItems,
  TelemetryConfig,
  LogLevel,
  PinFileInput,
  AlertEventName,
  AlertsConfig,
  WebhookConfig,
  AdminUiMode,
} from './types.js';
/** The members of a definition outside the six the digest covers, pinned by value. */
export type { ExtraMembers, PinnedDefinition } from '../explain/extraMembers.js';
/** The aggregate route's members and names (docs/aggregate.md). */
export { planAggregate, namespacedName, resolveNamespaced } from './aggregateNamespace.js';
export type {
  AggregateMember,
  AggregateNamespace,
  AggregatePlan,
  AggregateProblem,
} from './aggregateNamespace.js';
/** `onDrift` as one action per severity. */
export { driftPolicyOf, driftActionFor } from './driftPolicy.js';
/** Parse one pin file: from an object (embedding), from text, or from disk. */
export { parseServerConfig, parsePinFile, loadPinFile } from './pinFile.js';
/** Load every pin file of a folder, with the duplicate-name check. */
export { loadServersDir } from './serversDir.js';
/** The gateway file's `principals` block, read again on reload (docs/scopes.md). */
export { loadPrincipals } from './principals.js';
/** Load the gateway file and its servers folder, or one pin file served alone. */
export { loadGatewayConfig, loadSinglePinConfig } from './gatewayConfig.js';
/** Write a pin file in its stable member order. */
export { serializePinFile } from './serializePinFile.js';
/** The formats a pin file can be written in. */
export type { PinFileFormat } from './serializePinFile.js';
/** Tell a stdio upstream from an HTTP one. */
export { isStdioUpstream, httpUpstreamOf, upstreamIdentity, describeUpstream } from './upstreamKind.js';
/** The `auth` block of a pin file (docs/oauth.md). */
export type {
  AuthConfig,
  ResourceServerAuthConfig,
  ClientAuthConfig,
  UpstreamCredentialConfig,
} from './authSchema.js';
export { resourceServerAuthOf } from './authSchema.js';
