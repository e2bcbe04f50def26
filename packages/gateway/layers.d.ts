// Types of layers.js (the floors of src/, lowest first), for the tests that read it.

/** One floor of @toolpin/gateway's src/. */
export interface Floor {
  /** A folder of src/ (`wire`), or a file of src/ without `.ts` (`errors`, `index`). */
  readonly name: string;
  readonly kind: 'folder' | 'file';
  /** What the floor is for, one line (printed in docs/architecture.md). */
  readonly role: string;
}

/** The floors, lowest first. */
export const GATEWAY_FLOORS: readonly Floor[];
/** How a floor is written in prose: `wire/` for a folder, `errors.ts` for a file. */
export function floorLabel(floor: Floor): string;
/** The floors in one line, lowest first, as docs/architecture.md prints them. */
export function floorsLine(): string;
/** Flat-config entries, one per floor. */
export function layerRules(): object[];
/** The flat-config entry that keeps @toolpin/digest free of the gateway. */
export function digestRule(): object;
