/** Express middleware enforcing one server's pin under any mount path. */
export { pinGuard } from './front/pinGuard.js';
/** Options of pinGuard, and the router it returns. */
export type { PinGuardOptions, PinGuardRouter } from './front/pinGuard.js';
/** Builds the multi-server gateway app from a loaded config. */
export { createGateway, listen } from './front/createGateway.js';
/** The gateway app and its options. */
export type { Gateway, CreateGatewayOptions } from './front/createGateway.js';
/** Loads a gateway file and listens (what `toolpin serve` runs). */
export { startGateway } from './front/startGateway.js';
/** A listening gateway and its options. */
export type { RunningGateway, StartGatewayOptions } from './front/startGateway.js';
/** Config and pin file loading, strict validation, serialization. */
export {
  loadGatewayConfig,
  loadPinFile,
  loadServersDir,
  parsePinFile,
  parseServerConfig,
  serializePinFile,
} from './config/index.js';
/** Parsed config shapes. */
export type {
  GatewayConfig,
  ServerConfig,
  ExtraMembers,
  PinConfig,
  UpstreamConfig,
  Mode,
  OnDrift,
  OnDriftSetting,
  DriftAction,
  DriftPolicy,
} from './config/index.js';
/** The pin policy of one server, independent of transport. */
export { ServerGuard } from './guard/serverGuard.js';
/** Policy decisions and refusal reasons. */
export type { CallDecision, DenyData, DenyReason } from './policy/decision.js';
/** A finding of a catalog.drift event. */
export type { DriftFinding, DriftKind } from './policy/driftFinding.js';
/** Alert events (log lines and sinks). */
export { Alerts } from './observe/alerts.js';
/** Alert event shapes and sinks. */
export type { AlertEvent, AlertSink } from './observe/alerts.js';
/** The JSON-logging factory (pino). */
export { createLogger } from './observe/logger.js';
/** The JSON-RPC error codes the gateway answers with. */
export { ErrorCodes } from './wire/errorCodes.js';
/** The gateway's error class with stable codes. */
export { GatewayError } from './errors.js';
/** Stable gateway error codes. */
export type { GatewayErrorCode } from './errors.js';
/** Bounded per-session state, and the digest cache. */
export { SessionStore } from './state/sessionStore.js';
export { ToolDigester } from './state/toolDigester.js';
/** Webhook signatures, for receivers: `X-Toolpin-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. */
export {
  signWebhookBody,
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './observe/signWebhook.js';
/** A gateway's metrics (dedicated prom-client Registry), status board, webhooks and admin endpoints. */
export { GatewayObserver } from './observe/gatewayObserver.js';
export type { GatewayObserverOptions, ObservedGateway, StatusReport } from './observe/gatewayObserver.js';
export type { ReadinessReport } from './observe/adminApp.js';
export type { ServerStatus, ToolStatus, ToolState } from './observe/statusBoard.js';
/** The hooks the request path reports to (request counts, upstream contacts, open SSE streams). */
export type { GatewayTelemetry, OpenStream, UpstreamContact } from './observe/telemetry.js';
/** stdio and legacy HTTP+SSE: a connected SDK client for a pin's upstream (what `toolpin pin --command` lists with), and a shell-like argv splitter. */
export { connectUpstreamClient } from './transports/upstreamClient.js';
export type { ConnectUpstreamClientOptions } from './transports/upstreamClient.js';
export { splitCommandLine } from './transports/commandLine.js';
/** Runs toolpin as a stdio MCP server in front of one upstream (what `toolpin wrap` runs). */
export { runStdioFront } from './front/stdioFront.js';
export type { StdioFront, StdioFrontOptions } from './front/stdioFront.js';
/** Joins a client-facing and an upstream-facing SDK transport with a server's guard between them. */
export { MessageBridge } from './transports/messageBridge.js';
export type { MessageBridgeOptions, BridgeEnd } from './transports/messageBridge.js';
/** Upstream kinds: tell a stdio pin from an HTTP one. */
export { isStdioUpstream, describeUpstream } from './config/index.js';
export type { HttpUpstreamConfig, StdioUpstreamConfig } from './config/index.js';
/** Drift explained: per tool the changed members, JSON Pointer paths, word diffs of texts, and renames (CLI, catalog.drift, admin status). */
export { explainDrift, explainDefinitionChange } from './explain/explainDrift.js';
export type {
  DriftExplanation,
  ToolDrift,
  ToolDriftKind,
  DefinitionChange,
  TextChange,
  ExplainSide,
} from './explain/explainDrift.js';
/** Drift severity (docs/drift-severity.md): each changed path of a drifted definition judged high or low, with its rule. */
export { judgeDriftSeverity } from './explain/driftSeverity.js';
export type { DriftSeverity, PathSeverity, SeverityRule, SeverityJudgment } from './explain/driftSeverity.js';
/** A tool served with members its pin does not record (stripped by the gateway, recorded by approve). */
export type { UnpinnedMembers } from './explain/explainExtraMembers.js';
/** The explanation as text for people; a word-level diff of two texts; renames among removed and added tools. */
export { formatDriftExplanation } from './explain/formatDriftExplanation.js';
export { diffWords } from './explain/wordDiff.js';
export type { WordDiffOptions } from './explain/wordDiff.js';
export { detectRenames } from './explain/detectRenames.js';
export type { DetectedRename, RenameCandidate } from './explain/detectRenames.js';
/** Pin lifecycle: watch a servers folder (hot reload), plan and write an approval (atomic, comments kept), pin a catalog. */
export { watchPinFiles } from './config/pinWatcher.js';
export type { PinWatcher, PinWatcherOptions, PinWatcherTarget, ReloadSummary } from './config/pinWatcher.js';
export { planPinUpdate } from './config/planPinUpdate.js';
export type { PinUpdatePlan, PinUpdatePlanResult, PinUpdateOptions } from './config/planPinUpdate.js';
export { rewritePinFile } from './config/rewritePinFile.js';
export type { RewritePinFileOptions } from './config/rewritePinFile.js';
export type { PinDocumentUpdate } from './config/updatePinDocument.js';
export { pinFromCatalog } from './config/pinFromCatalog.js';
export type { CatalogPin } from './config/pinFromCatalog.js';
/** Lists a live server's whole catalog as an MCP client (what `toolpin pin` and `check` use). */
export { fetchLiveCatalog } from './transports/fetchLiveCatalog.js';
export type {
  LiveCatalog,
  LiveCatalogOptions,
  LiveHttpTransport,
  LiveTarget,
} from './transports/fetchLiveCatalog.js';
