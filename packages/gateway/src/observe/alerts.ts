import type { DenyData } from '../policy/decision.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import type { PinnedSurface } from '../policy/pinSurface.js';

/** A pinned surface besides tools, as alert events name it (`surface`; absent on the tools' events). */
export type OtherSurface = Exclude<PinnedSurface, 'tools'>;
import type { GatewayLogger } from './logger.js';
import { noTelemetry, type GatewayTelemetry } from './telemetry.js';

/** A drift or decision event, as logged and as handed to alert sinks (webhooks). */
export type AlertEvent =
  | { event: 'catalog.verified'; server: string; session: string; catalog: string | null; tools: number }
  | {
      event: 'catalog.verified';
      /** The surface observed: prompts, resource templates, instructions. */
      surface: OtherSurface;
      server: string;
      session: string;
      /** The surface's catalog digest (the instructions' digest). */
      catalog: string | null;
      /** How many items were listed (instructions: 1 when the server sent some, else 0). */
      items: number;
    }
  | {
      event: 'catalog.drift';
      server: string;
      session: string;
      /** The surface that drifted; absent for tools. */
      surface?: OtherSurface;
      mode: string;
      /** At most 200 findings (MAX_DRIFT_FINDINGS): the pin's own tools first. */
      drift: readonly DriftFinding[];
      /** Findings left out of `drift` past the bound; absent when none were. */
      findingsOmitted?: number;
    }
  | { event: 'call.blocked'; server: string; session: string; id: unknown; decision: DenyData }
  | { event: 'call.flagged'; server: string; session: string; id: unknown; decision: DenyData };

/** Receives every alert event beside the log line (metrics, webhooks). */
export type AlertSink = (event: AlertEvent) => void;

/** Emits alert events: one JSON log line each, then every sink; a failing sink never blocks traffic. */
export class Alerts {
  readonly #logger: GatewayLogger;
  readonly #sinks: AlertSink[] = [];
  #telemetry: GatewayTelemetry = noTelemetry;

  constructor(logger: GatewayLogger) {
    this.#logger = logger;
  }

  /**
   * The request-path hooks (request counts, latency, open streams) of this gateway. They live here
   * because the alerts object already reaches every front and checkpoint of a gateway. None by default.
   */
  get telemetry(): GatewayTelemetry {
    return this.#telemetry;
  }

  /** Installs the request-path hooks (the gateway's observer). */
  useTelemetry(telemetry: GatewayTelemetry): void {
    this.#telemetry = telemetry;
  }

  /** Adds a sink (metrics, webhook queue). */
  addSink(sink: AlertSink): void {
    this.#sinks.push(sink);
  }

  /** Logs the event and hands it to every sink. */
  emit(event: AlertEvent): void {
    const level = event.event === 'catalog.verified' ? 'info' : 'warn';
    this.#logger[level](event, event.event);
    for (const sink of this.#sinks) {
      try {
        sink(event);
      } catch (error) {
        this.#logger.error({ err: error, event: 'alert.sink_failed' }, 'alert sink failed');
      }
    }
  }
}
