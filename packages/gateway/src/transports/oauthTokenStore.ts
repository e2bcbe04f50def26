import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_PINS_FOLDER, OAUTH_TOKENS_FILE } from '../defaults.js';
import { isObject } from '../wire/isObject.js';

/** The tokens of one protected resource (an upstream URL), as the authorization server issued them. */
export interface StoredTokens {
  /** What the SDK's `saveTokens` received, unchanged (its `issuer` stamp included). */
  readonly tokens: OAuthTokens;
  /** When the access token expires (ms since the epoch), from `expires_in`; absent: not said. */
  readonly expiresAt?: number;
  /** The loopback redirect URL the client was registered with at login (refresh needs the same client). */
  readonly redirectUrl: string;
  /** Where the upstream's protected resource metadata was found (its challenge's `resource_metadata`). */
  readonly resourceMetadataUrl?: string;
}

/** What is kept per authorization server (issuer). */
export interface IssuerRecord {
  /** The client registered there (dynamic registration or a client ID metadata document URL). */
  readonly client?: OAuthClientInformationMixed;
  readonly metadata?: AuthorizationServerMetadata;
  /** Tokens per protected resource, keyed by the upstream URL. */
  readonly resources: Readonly<Record<string, StoredTokens>>;
}

interface StoreDocument {
  readonly version: 1;
  readonly issuers: Readonly<Record<string, IssuerRecord>>;
}

const EMPTY: StoreDocument = { version: 1, issuers: {} };

// The changes of this process to each store file, one after another: a read, an update and a write
// that overlapped another (two routes refreshing at once) would drop the other's tokens.
const writing = new Map<string, Promise<void>>();

/** The environment variable naming another token store file (a profile, a container's volume). */
export const TOKEN_STORE_ENV = 'TOOLPIN_TOKEN_STORE';

/**
 * Where `toolpin login` keeps tokens: `$TOOLPIN_TOKEN_STORE` when set, else
 * `~/.toolpin/oauth-tokens.json`, beside the pin files toolpin writes by default.
 */
export function defaultTokenStoreFile(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  const named = env[TOKEN_STORE_ENV];
  return named !== undefined && named !== ''
    ? named
    : join(homedir(), DEFAULT_PINS_FOLDER, OAUTH_TOKENS_FILE);
}

function parseDocument(text: string): StoreDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return EMPTY;
  }
  if (!isObject(parsed) || parsed.version !== 1 || !isObject(parsed.issuers)) return EMPTY;
  return parsed as unknown as StoreDocument;
}

/**
 * The OAuth tokens of the client mode, per authorization server (issuer) and, under it, per
 * upstream: one JSON file only its owner may read or write (0600, in a 0700 folder). It is read
 * again on every use, so a `toolpin login` in another terminal reaches a running `wrap`; each
 * change is a read, an update and an atomic write. Never written to a pin file, never logged.
 */
export class OAuthTokenStore {
  constructor(readonly file: string = defaultTokenStoreFile()) {}

  /** What is stored for `issuer`, or undefined. A file that does not parse reads as empty. */
  async issuer(issuer: string): Promise<IssuerRecord | undefined> {
    return (await this.read()).issuers[issuer];
  }

  /**
   * Replaces what is stored for `issuer` with what `change` returns (undefined: forget the issuer).
   * The updates of this process to one file are made one at a time (another process's are not: see
   * docs/oauth-client.md).
   */
  update(issuer: string, change: (record: IssuerRecord) => IssuerRecord | undefined): Promise<void> {
    const key = resolve(this.file);
    const done = (writing.get(key) ?? Promise.resolve()).then(() => this.write(issuer, change));
    const tail = done.catch(() => undefined);
    writing.set(key, tail);
    void tail.then(() => {
      if (writing.get(key) === tail) writing.delete(key);
    });
    return done;
  }

  private async write(
    issuer: string,
    change: (record: IssuerRecord) => IssuerRecord | undefined,
  ): Promise<void> {
    const document = await this.read();
    const next = change(document.issuers[issuer] ?? { resources: {} });
    const issuers = { ...document.issuers };
    if (next === undefined) delete issuers[issuer];
    else issuers[issuer] = next;
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    // A file someone made readable by others is made the owner's again before it is written.
    const mode = await stat(this.file).then(
      (stats) => stats.mode & 0o777,
      () => 0o600,
    );
    if (mode !== 0o600) await chmod(this.file, 0o600);
    await writeFileAtomic(this.file, `${JSON.stringify({ version: 1, issuers }, null, 2)}\n`, 0o600);
  }

  private async read(): Promise<StoreDocument> {
    try {
      return parseDocument(await readFile(this.file, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
      throw error;
    }
  }
}
