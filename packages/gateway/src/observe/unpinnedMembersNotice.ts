import type { UnpinnedMembers } from '../explain/explainExtraMembers.js';
import type { PinView } from '../policy/pinView.js';
import type { GatewayLogger } from './logger.js';

// One log line names at most this many tools (the count says how many there were).
const MAX_LOGGED_TOOLS = 50;

/**
 * Tells operators, once per tool and pin in force, that verified tools were served with members
 * their pin does not record: a pin file written before members were pinned by value, or members a
 * server added since. Enforce mode strips them; monitor mode passes them. Bounded: only pinned
 * keys are verified, and a new pin (reload) starts over.
 */
export class UnpinnedMembersNotice {
  readonly #logger: GatewayLogger;
  #pin: PinView | undefined;
  #noted = new Set<string>();

  constructor(logger: GatewayLogger) {
    this.#logger = logger;
  }

  /** Logs `pin.unrecorded_members` (warn) for the tools of `unpinned` not reported under this pin yet. */
  note(pin: PinView & { readonly file: string }, unpinned: readonly UnpinnedMembers[]): void {
    if (unpinned.length === 0) return;
    if (pin !== this.#pin) {
      this.#pin = pin;
      this.#noted = new Set();
    }
    const fresh = unpinned.filter((entry) => !this.#noted.has(entry.key));
    if (fresh.length === 0) return;
    for (const entry of fresh) this.#noted.add(entry.key);
    const monitor = pin.mode === 'monitor';
    this.#logger.warn(
      {
        event: 'pin.unrecorded_members',
        server: pin.name,
        file: pin.file,
        mode: pin.mode,
        action: monitor ? 'passed' : 'stripped',
        count: fresh.length,
        tools: fresh.slice(0, MAX_LOGGED_TOOLS),
      },
      `${monitor ? 'monitor mode passes' : 'stripped from the listing:'} tool members the pin does not record (a pin written before members were pinned by value, or members added since); \`toolpin approve ${pin.file}\` records them`,
    );
  }
}
