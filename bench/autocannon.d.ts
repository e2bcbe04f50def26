// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonClient {
    setHeaders(headers: Record<string, string>): void;
  }

  interface AutocannonOptions {
    url: string;
    method?: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Stop after this many requests (instead of a duration). */
    amount?: number;
    pipelining?: number;
    /** Seconds. */
    timeout?: number;
    headers?: Record<string, string>;
    body?: string;
    verifyBody?: (body: string) => boolean;
    setupClient?: (client: AutocannonClient) => void;
  }

  interface AutocannonResult {
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    requests: { total: number; average: number };
  }

  interface AutocannonInstance extends EventEmitter, PromiseLike<AutocannonResult> {
    on(
      event: 'response',
      listener: (client: AutocannonClient, status: number, bytes: number, ms: number) => void,
    ): this;
    stop(): void;
  }

  function autocannon(options: AutocannonOptions): AutocannonInstance;
  export default autocannon;
}
