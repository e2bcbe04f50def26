import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { deepFreeze } from '../config/deepFreeze.js';
import { parsePinFile } from '../config/pinFile.js';
import { pinFromCatalog, type CatalogPin } from '../config/pinFromCatalog.js';
import { planPinUpdate } from '../config/planPinUpdate.js';
import { rewritePinFile } from '../config/rewritePinFile.js';
import { pinnedCatalogOf, recordPrincipalPin } from '../config/recordPrincipalPin.js';
import type { ServerConfig } from '../config/index.js';
import type { ApprovedBy } from '../config/types.js';
import { statedDigests } from '../config/catalogManifest.js';
import { describeDifference, diffAgainstManifest } from '../config/manifestDigests.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';

// A listing is gathered per session until its last page; both bounds keep a server that pages
// forever, or many sessions listing at once, from growing memory without limit.
const MAX_LISTINGS = 64;
const MAX_TOOLS = 10_000;

/**
 * Trust on first use (`pin: trust-on-first-use`): gathers the pages of each session's listing
 * and, when one completes with every tool digestible, makes it the pin: put in force at once
 * (the completing page is then verified against it) and written over the pin file with the
 * writer `toolpin approve` uses. Until then the pin is empty, so enforce mode refuses every call.
 */
export class FirstUseRecorder {
  readonly #logger: GatewayLogger;
  readonly #listings = new Map<string, unknown[]>();

  constructor(logger: GatewayLogger) {
    this.#logger = logger;
  }

  /**
   * Feeds one page of a session's listing. Returns the new configuration when this page completes
   * the first complete observation of a server still waiting for its pin; otherwise undefined.
   */
  observePage(
    config: ServerConfig,
    sessionKey: string,
    tools: readonly unknown[],
    first: boolean,
    last: boolean,
    persist = true,
  ): ServerConfig | undefined {
    if (config.trustOnFirstUse !== true) {
      this.#listings.clear();
      return undefined;
    }
    // A page after the first, whose first page was not seen, is not a complete observation.
    const gathered = first ? [] : this.#listings.get(sessionKey);
    this.#listings.delete(sessionKey);
    if (gathered === undefined || gathered.length + tools.length > MAX_TOOLS) return undefined;
    gathered.push(...tools);
    if (!last) {
      if (this.#listings.size >= MAX_LISTINGS)
        this.#listings.delete(this.#listings.keys().next().value as string);
      this.#listings.set(sessionKey, gathered);
      return undefined;
    }
    const observed = this.#observe(config, sessionKey, gathered);
    if (observed === undefined) return undefined;
    const approvedBy = this.#approvedBy(config, sessionKey, observed);
    if (approvedBy === null) return undefined;
    const { trustOnFirstUse: _pending, firstUseManifest: _manifest, ...rest } = config;
    const pinned: ServerConfig = deepFreeze({
      ...rest,
      pin: observed.pin,
      definitions: observed.definitions,
      extraMembers: observed.extraMembers,
      ...(approvedBy === undefined ? {} : { approvedBy }),
    });
    if (persist) void this.#persist(config, observed, approvedBy);
    this.#announce(config, sessionKey, observed, approvedBy);
    return pinned;
  }

  /** Says which first pin was put in force: one a signed manifest approved, or one trusted on first use. */
  #announce(
    config: ServerConfig,
    sessionKey: string,
    observed: CatalogPin,
    approvedBy: ApprovedBy | undefined,
  ): void {
    const fields = {
      server: config.name,
      file: config.file,
      session: sessionLabel(sessionKey),
      catalog: observed.pin.catalog,
    };
    if (approvedBy !== undefined)
      this.#logger.info(
        { event: 'pin.approved_by_manifest', ...fields, manifest: approvedBy.manifest, kid: approvedBy.kid },
        'the first complete catalog observed is the one the signed manifest publishes: it is now the pin',
      );
    else
      this.#logger.warn(
        { event: 'pin.trusted_on_first_use', ...fields, tools: Object.keys(observed.pin.tools).length },
        'TRUST ON FIRST USE: the first complete catalog observed is now the pin; review it (git diff) before relying on it',
      );
  }

  /**
   * With a `firstUseManifest`: the pin's `approvedBy` when the observed tools are the manifest's
   * (each digest, and the catalog digest), else null (said in the log; nothing is pinned, and the
   * next complete listing is compared again). Without one: undefined (trust on first use).
   */
  #approvedBy(config: ServerConfig, sessionKey: string, observed: CatalogPin): ApprovedBy | null | undefined {
    const manifest = config.firstUseManifest;
    if (manifest === undefined) return undefined;
    if ('unverified' in manifest) {
      this.#logger.warn(
        {
          event: 'pin.first_use_refused',
          server: config.name,
          session: sessionLabel(sessionKey),
          problem: 'manifest not verified',
        },
        "not pinning: the firstUseManifest was not verified against a gateway file's manifestKeys",
      );
      return null;
    }
    // Verified at load, but the first listing may come long after: a statement past its expiresAt approves nothing.
    const { expiresAt } = manifest.body;
    if (expiresAt !== undefined && Date.parse(expiresAt) <= Date.now()) {
      this.#logger.warn(
        {
          event: 'pin.first_use_refused',
          server: config.name,
          session: sessionLabel(sessionKey),
          problem: 'manifest expired',
          expiresAt,
        },
        `not pinning: the firstUseManifest expired at ${expiresAt}`,
      );
      return null;
    }
    // The gateway observes tools at first use: the other surfaces are compared by `toolpin pin --manifest`.
    const { catalog, tools } = statedDigests(manifest.body);
    const differences = diffAgainstManifest({ catalog, tools }, observed.pin);
    const { name, version } = manifest.body.server;
    if (differences.length === 0)
      return {
        via: 'manifest',
        kid: manifest.kid,
        manifest: manifest.digest,
        source: manifest.source,
        server: version === undefined ? name : `${name}@${version}`,
      };
    this.#logger.warn(
      {
        event: 'pin.first_use_refused',
        server: config.name,
        session: sessionLabel(sessionKey),
        manifest: manifest.digest,
        observed: observed.pin.catalog,
        differences: differences.map(describeDifference).map((line) => line.trim()),
      },
      'not pinning a first catalog that is not the one the signed manifest publishes',
    );
    return null;
  }

  #observe(config: ServerConfig, sessionKey: string, tools: unknown[]): CatalogPin | undefined {
    const session = sessionLabel(sessionKey);
    if (tools.length === 0) {
      // An empty catalog is more often a server not ready or a client not authorized than a
      // server with no tools; pinning it would block every tool that appears later.
      this.#logger.warn(
        { event: 'pin.first_use_skipped', server: config.name, session, problem: 'empty catalog' },
        'not trusting an empty catalog',
      );
      return undefined;
    }
    try {
      return pinFromCatalog(tools, config.profile);
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      this.#logger.warn(
        { event: 'pin.first_use_skipped', server: config.name, session, problem },
        'not trusting a catalog with an unverifiable tool',
      );
      return undefined;
    }
  }

  /**
   * Writes a catalog trusted on first use for `principal` as its entry of the pin file's
   * `principals` (an entry already there wins: the watcher puts it in force).
   */
  persistPrincipal(config: ServerConfig, principal: string, trusted: ServerConfig): void {
    const file = config.file;
    if (!isAbsolute(file)) return;
    recordPrincipalPin(file, principal, pinnedCatalogOf(trusted), { replace: false }).then(
      (written) => {
        if (written)
          this.#logger.info(
            { event: 'pin.written', server: config.name, file, principal, catalog: trusted.pin.catalog },
            "a principal's first-use pin written",
          );
      },
      (error: unknown) =>
        this.#logger.error(
          { event: 'pin.write_failed', server: config.name, file, principal, err: error },
          "a principal's first-use pin is in force but could not be written",
        ),
    );
  }

  async #persist(
    config: ServerConfig,
    observed: CatalogPin,
    approvedBy: ApprovedBy | undefined,
  ): Promise<void> {
    const file = config.file;
    if (!isAbsolute(file)) return; // An embedded pin (pinGuard options) has no file: in force in memory only.
    try {
      const text = await readFile(file, 'utf8');
      // Someone approved or edited the file meanwhile: theirs wins, the watcher puts it in force.
      if (parsePinFile(text, file).trustOnFirstUse !== true) return;
      const result = planPinUpdate(config, observed);
      if (!result.ok) throw new Error(result.message);
      await rewritePinFile(file, approvedBy === undefined ? result.plan : { ...result.plan, approvedBy }, {
        expected: text,
      });
      this.#logger.info(
        { event: 'pin.written', server: config.name, file, catalog: observed.pin.catalog },
        'first-use pin written',
      );
    } catch (error) {
      this.#logger.error(
        { event: 'pin.write_failed', server: config.name, file, err: error },
        'the first-use pin is in force but could not be written; the gateway will trust again after a restart',
      );
    }
  }
}
