// The public surface of the published packages, imported as users import them (the built dist/,
// through each package's `exports`). A runtime export or an entry point added or removed fails
// here: widening the API is a deliberate change to this file, the barrel and the README.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

interface Entry {
  readonly types: string;
  readonly default: string;
}

interface Manifest {
  readonly exports: Readonly<Record<string, Entry>>;
}

/** Every entry point of each package, with its runtime export names (sorted by code unit). */
const SURFACE: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  gateway: {
    '@toolpin/gateway': [
      'Alerts',
      'ErrorCodes',
      'GatewayError',
      'SessionStore',
      'ToolDigester',
      'createGateway',
      'createLogger',
      'isStdioUpstream',
      'listen',
      'loadGatewayConfig',
      'loadPinFile',
      'loadServersDir',
      'parsePinFile',
      'parseServerConfig',
      'pinGuard',
      'serializePinFile',
      'startGateway',
    ],
    '@toolpin/gateway/explain': [
      'explainDefinitionChange',
      'explainDrift',
      'formatDriftExplanation',
      'judgeDriftSeverity',
    ],
    '@toolpin/gateway/pin': ['pinFromCatalog', 'planPinUpdate', 'rewritePinFile'],
    '@toolpin/gateway/transports': ['connectUpstreamClient', 'runStdioFront'],
    '@toolpin/gateway/webhooks': [
      'WEBHOOK_SIGNATURE_HEADER',
      'WEBHOOK_TIMESTAMP_HEADER',
      'signWebhookBody',
      'verifyWebhookSignature',
    ],
  },
  digest: {
    '@toolpin/digest': [
      'AGENTAVOW_PROFILE',
      'DigestError',
      'HASHED_MEMBERS',
      'INSTRUCTIONS_PROFILE',
      'MAX_CANONICAL_DEPTH',
      'MAX_CATALOG_ENTRIES',
      'PROMPTS_OVERFLOW_KEY',
      'PROMPT_ARGUMENT_MEMBERS',
      'PROMPT_MEMBERS',
      'PROMPT_PROFILE',
      'TEMPLATES_OVERFLOW_KEY',
      'TEMPLATE_MEMBERS',
      'TEMPLATE_PROFILE',
      'TOOLS_OVERFLOW_KEY',
      'TRACE_PROFILE',
      'canonicalizeJson',
      'changedPointers',
      'definitionOf',
      'diffCatalogs',
      'digestCatalog',
      'digestInstructions',
      'digestPrompt',
      'digestPromptCatalog',
      'digestTemplate',
      'digestTemplateCatalog',
      'digestTool',
      'encodeFoldKey',
      'encodePromptKey',
      'encodeTemplateKey',
      'encodeToolKey',
      'foldCatalog',
      'restrictPrompt',
      'restrictTemplate',
      'restrictTool',
    ],
  },
};

function packageDir(folder: string): URL {
  return new URL(`../../packages/${folder}/`, import.meta.url);
}

function manifestOf(folder: string): Manifest {
  return JSON.parse(readFileSync(new URL('package.json', packageDir(folder)), 'utf8')) as Manifest;
}

/** `@toolpin/gateway/explain` -> `./explain`, as the package's `exports` names it. */
function subpathOf(specifier: string): string {
  const [scope, name, ...rest] = specifier.split('/');
  if (scope !== '@toolpin' || name === undefined) throw new Error(`not a @toolpin specifier: ${specifier}`);
  return rest.length === 0 ? '.' : `./${rest.join('/')}`;
}

describe.each(Object.entries(SURFACE))('the public surface of @toolpin/%s', (folder, entries) => {
  const manifest = manifestOf(folder);
  const readme = readFileSync(new URL('README.md', packageDir(folder)), 'utf8');

  it('has exactly the listed entry points in package.json `exports`', () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(Object.keys(entries).map(subpathOf).sort());
  });

  describe.each(Object.entries(entries))('%s', (specifier, names) => {
    const entry = manifest.exports[subpathOf(specifier)];

    it('exports exactly the listed runtime values', async () => {
      const exported = (await import(specifier)) as Record<string, unknown>;
      expect(Object.keys(exported).sort()).toEqual([...names].sort());
      for (const name of names) expect(exported[name]).toBeDefined();
    });

    it('resolves to its built file, with a declaration file that declares every runtime export', () => {
      expect(entry).toEqual({
        types: expect.stringMatching(/\.d\.ts$/),
        default: expect.stringMatching(/\.js$/),
      });
      if (entry === undefined) return;
      const code = fileURLToPath(new URL(entry.default, packageDir(folder)));
      const types = fileURLToPath(new URL(entry.types, packageDir(folder)));
      expect(require.resolve(specifier)).toBe(code);
      expect(existsSync(types)).toBe(true);
      const declarations = readFileSync(types, 'utf8');
      for (const name of names)
        expect([name, new RegExp(`\\b${name}\\b`).test(declarations)]).toEqual([name, true]);
    });

    it('is documented in the package README', () => {
      expect(readme).toContain(`\`${specifier}\``);
    });
  });
});

describe('GatewayErrorCode', () => {
  it('has one row per code in the README table, and one doc comment per code', () => {
    const source = readFileSync(new URL('src/errors.ts', packageDir('gateway')), 'utf8');
    const declared = /export type GatewayErrorCode =([\s\S]*?'GW_[A-Z_]+';)/.exec(source)?.[1] ?? '';
    const codes = [...declared.matchAll(/'(GW_[A-Z_]+)'/g)].map((match) => match[1]).sort();
    expect(codes.length).toBeGreaterThan(0);
    const readme = readFileSync(new URL('README.md', packageDir('gateway')), 'utf8');
    const rows = [...readme.matchAll(/^\| `(GW_[A-Z_]+)` +\|/gm)].map((match) => match[1]).sort();
    expect(rows).toEqual(codes);
    // Each member of the union is preceded by its own doc comment (kept in the declaration file).
    const comments = [...declared.matchAll(/\*\/\s*\| '(GW_[A-Z_]+)'/g)].map((match) => match[1]).sort();
    expect(comments).toEqual(codes);
  });
});
