import type { ToolObservation } from './toolObservation.js';

/**
 * Turns one served tool definition into an observation (its digest, or why it has none) under a
 * digest profile. The gateway's cached digester (state/toolDigester.ts) implements it.
 */
export interface ToolObserver {
  observe(tool: unknown, profile: string): ToolObservation;
}
