// Types of server.mjs, for the tests that start the demo server in-process.

/** The sentence the rug pull appends to get_weather's description. */
export declare const DRIFT_SENTENCE: string;

/** The demo catalog, drifted or not (a fresh copy). */
export declare function demoTools(drift: boolean): Record<string, unknown>[];

/** A running demo server. */
export interface DemoServer {
  readonly url: string;
  /** True while get_weather is served drifted. */
  readonly drifted: boolean;
  /** Serves the rug pull (or the pinned catalog again) and sends notifications/tools/list_changed. */
  setDrift(on: boolean): Promise<void>;
  close(): Promise<void>;
}

/** Starts the demo server on `host:port` (port 0 picks a free one). */
export declare function startDemoServer(options?: {
  readonly port?: number;
  readonly drift?: boolean;
  readonly host?: string;
}): Promise<DemoServer>;
