// The floors of @toolpin/gateway's src/, lowest first: the one list that eslint.config.js turns
// into no-restricted-imports rules and that docs/architecture.md prints (test/layers.test.ts
// checks both). A floor may import only from floors below it and from itself.

// Types: layers.d.ts.

/** Each floor: `name` (a folder of src/, or a file of src/ without `.ts`), `kind`, `role` (one line). */
export const GATEWAY_FLOORS = Object.freeze([
  { name: 'errors', kind: 'file', role: 'GatewayError and its codes; imports nothing' },
  {
    name: 'defaults',
    kind: 'file',
    role: 'the defaults and constants shared by the gateway and the CLI, each named once',
  },
  {
    name: 'wire',
    kind: 'folder',
    role: 'the protocol, pure: JSON-RPC, media types, SSE framing, headers, URL and byte redaction, depth',
  },
  {
    name: 'explain',
    kind: 'folder',
    role: "a tool definition's members, and drift explained (pure JSON/text diffs)",
  },
  {
    name: 'config',
    kind: 'folder',
    role: 'parsing, validating, serializing and writing gateway and pin files (no watchers, no logging)',
  },
  { name: 'policy', kind: 'folder', role: 'pure decisions over a pin and observations (no I/O, no logger)' },
  {
    name: 'state',
    kind: 'folder',
    role: 'per-session catalogs, the answer books, the session store, the digester cache',
  },
  { name: 'observe', kind: 'folder', role: 'logs, alerts, metrics, status, webhooks' },
  { name: 'checkpoint', kind: 'folder', role: 'ServerCheckpoint: the one decision path per server' },
  {
    name: 'auth',
    kind: 'folder',
    role: 'OAuth resource server: token verification (jose), identity provider fetches, upstream credentials',
  },
  {
    name: 'transports',
    kind: 'folder',
    role: 'reaching upstreams: the HTTP proxy, stdio children, SSE clients, the message bridge',
  },
  {
    name: 'review',
    kind: 'folder',
    role: 'the review page on the admin listener: HTML, live updates, approve / keep blocked / patch',
  },
  {
    name: 'ingress',
    kind: 'folder',
    role: 'what clients connect to (the fronts, their sessions and routes) and the runtime (start, reload, pin watcher)',
  },
  { name: 'cli', kind: 'folder', role: 'the toolpin commands' },
  {
    name: 'entries',
    kind: 'folder',
    role: 'the subpath barrels (`@toolpin/gateway/pin`, `/explain`, `/transports`, `/webhooks`)',
  },
  { name: 'index', kind: 'file', role: 'the public barrel of @toolpin/gateway' },
]);

/** How a floor is written in prose: `wire/` for a folder, `errors.ts` for a file. */
export function floorLabel(floor) {
  return floor.kind === 'folder' ? `${floor.name}/` : `${floor.name}.ts`;
}

/** The floors in one line, lowest first, as docs/architecture.md prints them. */
export function floorsLine() {
  return GATEWAY_FLOORS.map((floor) => `\`${floorLabel(floor)}\``).join(' → ');
}

const escape = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Flat-config entries, one per floor: a file of the floor may not import a floor above it (nor
 * the package by its own name). Relative imports only: src/ is flat, one level of folders.
 */
export function layerRules() {
  const self = {
    regex: '^@toolpin/gateway(?:/|$)',
    message: 'inside @toolpin/gateway, import the module itself, by a relative path',
  };
  return GATEWAY_FLOORS.map((floor, index) => {
    const above = GATEWAY_FLOORS.slice(index + 1);
    // From a folder, a floor is `../<name>/…` or `../<name>.js`; from a file of src/ it is `./<name>…`.
    const prefix = floor.kind === 'folder' ? '^(?:\\.\\./)+' : '^\\./';
    const names = above.map((other) => escape(other.name)).join('|');
    const patterns = [self];
    if (above.length > 0)
      patterns.push({
        regex: `${prefix}(?:${names})(?:/|\\.js$)`,
        message: `${floorLabel(floor)} may import only floors below it (docs/architecture.md): ${GATEWAY_FLOORS.slice(0, index).map(floorLabel).join(', ') || 'nothing'}`,
      });
    return {
      name: `toolpin/layers/${floor.name}`,
      files: [
        floor.kind === 'folder'
          ? `packages/gateway/src/${floor.name}/**/*.ts`
          : `packages/gateway/src/${floor.name}.ts`,
      ],
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    };
  });
}

/** The digest package stands alone: it never imports the gateway. */
export function digestRule() {
  return {
    name: 'toolpin/layers/digest',
    files: ['packages/digest/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@toolpin/gateway(?:/|$)|(?:^|/)gateway/(?:src|dist)(?:/|$)',
              message: '@toolpin/digest does not depend on @toolpin/gateway (the gateway depends on it)',
            },
          ],
        },
      ],
    },
  };
}
