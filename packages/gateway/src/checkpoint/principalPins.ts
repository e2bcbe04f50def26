import type { PinnedCatalog, ServerConfig } from '../config/index.js';
import { PENDING_PIN } from '../config/pinFileSchema.js';
import { principalOfKey } from '../policy/sessionPrincipal.js';

/**
 * The pin a principal's sessions are checked against (docs/scopes.md#pins-per-principal): the
 * server's config with the principal's own catalog in place of the file's. A principal the file
 * pins no catalog for gets an empty one, so every item is refused `tool_not_pinned` (and
 * `prompt_not_pinned`, `template_not_pinned`), or, under `principalFirstUse`, is trusted on first use.
 */
function principalView(config: ServerConfig, entry: PinnedCatalog | undefined): ServerConfig {
  const { trustOnFirstUse: _pending, ...rest } = config;
  if (entry !== undefined) return Object.freeze({ ...rest, ...entry });
  const empty = { catalog: PENDING_PIN.catalog, items: {} };
  return Object.freeze({
    ...rest,
    pin: {
      catalog: PENDING_PIN.catalog,
      tools: {},
      ...(config.pin.prompts === undefined ? {} : { prompts: empty }),
      ...(config.pin.resourceTemplates === undefined ? {} : { resourceTemplates: empty }),
      ...(config.pin.instructions === undefined ? {} : { instructions: config.pin.instructions }),
    },
    definitions: {},
    promptDefinitions: {},
    templateDefinitions: {},
    extraMembers: {},
    ...(config.principalFirstUse === true ? { trustOnFirstUse: true as const } : {}),
  });
}

/**
 * The views of one config per principal, made once each (a session catalog remembers the very pin
 * it was judged under), forgotten when the config is replaced.
 */
export class PrincipalPins {
  #config: ServerConfig | undefined;
  readonly #views = new Map<string, ServerConfig>();

  /**
   * The pin a session is checked against: `config` itself when its file pins one catalog for all
   * (no `principals`, no `principalFirstUse`), or the key speaks for no principal; else its principal's view.
   */
  viewFor(config: ServerConfig, sessionKey: string): ServerConfig {
    const pins = config.principalPins;
    if (pins === undefined && config.principalFirstUse !== true) return config;
    const principal = principalOfKey(sessionKey);
    if (principal === undefined) return config;
    if (this.#config !== config) {
      this.#config = config;
      this.#views.clear();
    }
    let view = this.#views.get(principal);
    if (view === undefined) {
      view = principalView(
        config,
        pins !== undefined && Object.hasOwn(pins, principal) ? pins[principal] : undefined,
      );
      this.#views.set(principal, view);
    }
    return view;
  }
}
