// The embedding API of @toolpin/gateway. Every runtime export here is public API, listed in
// test/api/publicSurface.test.ts; the rest sits behind the subpaths in src/entries/ or stays internal.

/** Express middleware enforcing one server's pin under any mount path. */
export { pinGuard } from './ingress/pinGuard.js';
/** Options of pinGuard, and the handler it returns. */
export type { PinGuardOptions, PinGuardRouter } from './ingress/pinGuard.js';
/** Builds the multi-server gateway app from a loaded config, and listens on a host and port. */
export { createGateway, listen } from './ingress/createGateway.js';
/** The gateway app and its options. */
export type { Gateway, CreateGatewayOptions } from './ingress/createGateway.js';
/** Loads a gateway file and listens (what `toolpin serve` runs). */
export { startGateway } from './ingress/startGateway.js';
/** A listening gateway and its options. */
export type { RunningGateway, StartGatewayOptions } from './ingress/startGateway.js';
/** What a reload of the servers folder changed (`RunningGateway.reload()`). */
export type { ReloadSummary } from './ingress/pinWatcher.js';
/** Config and pin file loading, strict validation, serialization; a stdio upstream told from an HTTP one. */
export {
  isStdioUpstream,
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
  SurfacePinConfig,
  UpstreamConfig,
  HttpUpstreamConfig,
  StdioUpstreamConfig,
  Mode,
  OnDrift,
  OnDriftSetting,
  ValidateConfig,
  DriftAction,
  DriftPolicy,
} from './config/index.js';
/** The one decision path of one server (`PinGuardRouter.checkpoint`: `replaceConfig` puts a new pin in force). */
export type { ServerCheckpoint } from './checkpoint/serverCheckpoint.js';
/** @deprecated The earlier name of ServerCheckpoint. */
export type { ServerCheckpoint as ServerGuard } from './checkpoint/serverCheckpoint.js';
/** Policy decisions and refusal reasons. */
export type { CallDecision, DenyData, DenyReason } from './policy/decision.js';
/** A finding of a catalog.drift event. */
export type { DriftFinding, DriftKind } from './policy/driftFinding.js';
/** State several pinGuards (or checkpoints) of one process share (pinGuard's `alerts`, `sessions`, `digester`). */
export { Alerts } from './observe/alerts.js';
export { SessionStore } from './state/sessionStore.js';
export { ToolDigester } from './state/toolDigester.js';
/** Alert event shapes and sinks (`alerts.addSink`). */
export type { AlertEvent, AlertSink } from './observe/alerts.js';
/** The JSON-logging factory (pino), and the logger every option named `logger` takes. */
export { createLogger } from './observe/logger.js';
export type { GatewayLogger } from './observe/logger.js';
/** The JSON-RPC error codes the gateway answers with. */
export { ErrorCodes } from './wire/errorCodes.js';
/** The gateway's error class with stable codes. */
export { GatewayError } from './errors.js';
/** Stable gateway error codes. */
export type { GatewayErrorCode } from './errors.js';
/** A running gateway's metrics, status board and admin endpoints (`RunningGateway.observer`). */
export type { GatewayObserver, StatusReport } from './observe/gatewayObserver.js';
export type { ReadinessReport } from './observe/adminApp.js';
export type { ServerStatus, ToolStatus, ToolState } from './observe/statusBoard.js';
/** The hooks the request path reports to (`Alerts.telemetry`: request counts, upstream contacts, open SSE streams). */
export type { GatewayTelemetry, OpenStream, UpstreamContact } from './observe/telemetry.js';
