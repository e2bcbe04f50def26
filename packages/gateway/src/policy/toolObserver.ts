import type { SurfaceSpec } from './pinSurface.js';
import type { ToolObservation } from './toolObservation.js';

/**
 * Turns one served definition into an observation (its digest, or why it has none) under a
 * digest profile: a tool, or with `spec` an item of another listed surface (a prompt, a resource
 * template). The gateway's cached digester (state/toolDigester.ts) implements it.
 */
export interface ToolObserver {
  observe(tool: unknown, profile: string, spec?: SurfaceSpec): ToolObservation;
}
