import { digestInstructions, foldCatalog } from '@toolpin/digest';
import type { ServerConfig } from '../config/index.js';
import type { Alerts } from '../observe/alerts.js';
import type { GatewayLogger } from '../observe/logger.js';
import { GatewayError } from '../errors.js';
import { errorSummary } from '../observe/errorSummary.js';
import { logInvalidMessage } from '../observe/invalidMessage.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { traceDecision } from '../observe/tracing.js';
import { reportContact } from '../observe/telemetry.js';
import type { CallDecision, DenyData } from '../policy/decision.js';
import { refusalMessage } from '../policy/refusalMessage.js';
import type { PageInspection } from '../policy/inspectToolsPage.js';
import { decideCall } from '../policy/decideCall.js';
import { inspectToolsPage } from '../policy/inspectToolsPage.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import {
  LISTED_SURFACES,
  SURFACES,
  carriesInstructions,
  surfaceOfListing,
  surfacePin,
  surfacesChangedBy,
  type ListedSurface,
  type SurfaceSpec,
} from '../policy/pinSurface.js';
import type { PinView } from '../policy/pinView.js';
import type { ItemTest } from '../policy/principalScopes.js';
import { uriMatchesTemplate } from '../policy/templateMatch.js';
import { principalOfKey } from '../policy/sessionPrincipal.js';
import type { ScopeTable } from '../state/scopeTable.js';
import type { SurfaceListing } from '../wire/listedSurfaces.js';
import { textChanges } from '../explain/textChanges.js';
import { UnpinnedMembersNotice } from '../observe/unpinnedMembersNotice.js';
import type { FetchedPage } from '../state/collectToolPages.js';
import type { CatalogCompletion, SessionCatalog } from '../state/sessionCatalog.js';
import type { PinnedSchemas } from '../state/pinnedSchemas.js';
import { ANY_RESULT, AnswerBook, type Expectation } from '../state/answerBook.js';
import type { SessionState, SessionStore } from '../state/sessionStore.js';
import type { ToolDigester } from '../state/toolDigester.js';
import { SchemaChecks } from './schemaChecks.js';
import {
  checkStatedArtifact,
  statedArtifactRefusal,
  type RefusedStatedArtifact,
} from './statedArtifactCheck.js';
import { FirstUseRecorder } from './trustOnFirstUse.js';
import { PrincipalPins } from './principalPins.js';
import { pinnedCatalogOf } from '../config/recordPrincipalPin.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import {
  idKey,
  isResponse,
  jsonRpcError,
  ownEnvelope,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../wire/jsonRpc.js';
import {
  decideUpstreamText,
  unverifiableAnswer,
  type InvalidUpstreamMessage,
} from '../wire/upstreamMessage.js';
import { matchResultEnvelope, matchResultEnvelopeBytes } from '../wire/resultEnvelope.js';
import { VerifiedListings, type VerifiedListing } from './verifiedListings.js';
import { isObject } from '../wire/isObject.js';

/** What a {@link ServerCheckpoint} is built from. */
export interface ServerCheckpointOptions {
  readonly config: ServerConfig;
  readonly sessions: SessionStore;
  readonly digester: ToolDigester;
  readonly alerts: Alerts;
  readonly logger: GatewayLogger;
  /** Compiled pinned schemas (shared by a gateway's checkpoints); by default the checkpoint's own. */
  readonly schemas?: PinnedSchemas;
  /** The principals' scopes in force (shared by a gateway's checkpoints); absent: no scopes. */
  readonly scopes?: ScopeTable;
}

/**
 * Lists the upstream catalog for a session when the gateway has not seen it (fetch on miss), every
 * page, with the gateway's own ids: `listing` says which (`tools/list`, `prompts/list`).
 */
export type CatalogRefresh = (listing: SurfaceListing) => Promise<FetchedPage[]>;

/** A listing page as #inspectListResult verified it. */
type InspectedPage = {
  readonly config: ServerConfig;
  readonly inspection: PageInspection;
  readonly last: boolean;
};

/** What {@link ServerCheckpoint.inspectUpstreamText} decided about one upstream text. */
export type UpstreamTextVerdict =
  | {
      readonly ok: true;
      /** The text was a JSON array (a batch of messages). */
      readonly batch: boolean;
      /** What the client receives, one value per message kept. */
      readonly out: readonly unknown[];
      /** The serialization of `out[0]` when it is already known (a listing verified before). */
      readonly text?: string;
    }
  | { readonly ok: false; readonly reason: 'malformed'; readonly problem: string };

/**
 * What an upstream message becomes when it answers nothing: a second answer under an answered id,
 * or a result no request of its exchange awaits. It is dropped (and logged), never relayed.
 */
export const DROPPED: unique symbol = Symbol('dropped');

/**
 * The key of the awaited request an upstream answer resolves to: its own id's, or, for a string id
 * nothing awaits, the number the SDK's clients read it as (they match answers by `Number(id)`, so
 * `"4"`, `"4.0"` or `" 4"` answer request 4 there): such an answer is judged as the answer to 4,
 * and leaves under 4.
 */
function answerKey(book: AnswerBook, id: string | number): { key: string; id: string | number } {
  const own = idKey(id);
  if (typeof id === 'number' || book.awaits(own)) return { key: own, id };
  const read = Number(id);
  if (!Number.isFinite(read)) return { key: own, id };
  const alias = idKey(read);
  return book.awaits(alias) ? { key: alias, id: read } : { key: own, id };
}

/** A server still waiting for its first-use pin gathers every listing's tools: no shortcut applies. */
function awaitsFirstUse(config: ServerConfig): boolean {
  return (config as { readonly trustOnFirstUse?: unknown }).trustOnFirstUse === true;
}

/**
 * The pin policy of one server, independent of transport: inspects tools/list results, tracks
 * each session's catalog, and decides tools/call. The pin is swapped whole on reload, and every
 * decision reads the pin in force at that moment.
 */
export class ServerCheckpoint {
  #config: ServerConfig;
  readonly #sessions: SessionStore;
  readonly #digester: ToolDigester;
  readonly #alerts: Alerts;
  readonly #logger: GatewayLogger;
  readonly #verified = new VerifiedListings();
  readonly #firstUse: FirstUseRecorder;
  readonly #unpinned: UnpinnedMembersNotice;
  readonly #schemaChecks: SchemaChecks;
  readonly #scopes: ScopeTable | undefined;
  readonly #principalPins = new PrincipalPins();

  /** The gateway's logger, for the fronts' screening lines that are not alerts. */
  get logger(): GatewayLogger {
    return this.#logger;
  }

  constructor(options: ServerCheckpointOptions) {
    this.#scopes = options.scopes;
    this.#config = options.config;
    this.#sessions = options.sessions;
    this.#digester = options.digester;
    this.#alerts = options.alerts;
    this.#logger = options.logger;
    this.#firstUse = new FirstUseRecorder(options.logger);
    this.#unpinned = new UnpinnedMembersNotice(options.logger);
    this.#schemaChecks = new SchemaChecks(options.logger, options.schemas);
  }

  /** The server's configuration and pin in force. */
  get config(): ServerConfig {
    return this.#config;
  }

  /** Where this server's alert events go. */
  get alerts(): Alerts {
    return this.#alerts;
  }

  /** Puts a new pin (or whole server config) in force for the next decision. */
  replaceConfig(config: ServerConfig): void {
    this.#config = config;
    this.#schemaChecks.reset();
    // A listing verified under the pin that leaves is never replayed under the new one.
    this.#verified.clear();
  }

  /**
   * The pin this session is checked against: the server's, or, where its pin file pins a catalog
   * per principal, the catalog of the principal the session speaks for (docs/scopes.md).
   */
  #viewFor(sessionKey: string): ServerConfig {
    return this.#principalPins.viewFor(this.#config, sessionKey);
  }

  #state(sessionKey: string): SessionState {
    return this.#sessions.get(this.#storeKey(sessionKey));
  }

  // The store's key of the session asked last: one request asks for its session several times, and
  // the same key string (its hash computed once) spares a concatenation and a rehash each time.
  #lastName = '';
  #lastSessionKey = '';
  #lastStoreKey = '';

  /** The session's key in the store shared by every server: the server's name, then the session's key. */
  #storeKey(sessionKey: string): string {
    const { name } = this.#config;
    if (sessionKey !== this.#lastSessionKey || name !== this.#lastName) {
      this.#lastName = name;
      this.#lastSessionKey = sessionKey;
      this.#lastStoreKey = `${name}\n${sessionKey}`;
    }
    return this.#lastStoreKey;
  }

  /**
   * The book an answer of this scope is matched in: a sessionless exchange's own (`book`), else the
   * session's, whatever stream of the session the answer arrives on.
   */
  #book(sessionKey: string, book: AnswerBook | undefined): AnswerBook {
    return book ?? this.#state(sessionKey).answers;
  }

  #expect(sessionKey: string, id: JsonRpcId, expectation: Expectation, book?: AnswerBook): void {
    if (id === null) return;
    const forgotten = this.#book(sessionKey, book).expect(idKey(id), expectation);
    if (forgotten !== undefined)
      this.#logger.warn(
        { event: 'session.answers_forgotten', server: this.#config.name, session: sessionLabel(sessionKey) },
        'too many requests awaiting their answer: the oldest is forgotten (its answer will be dropped)',
      );
  }

  /**
   * Remembers a client request the gateway forwards, so that its answer is recognised (on whatever
   * stream of the session it arrives, or on the exchange of `book`) and judged as what it answers:
   * a listing of a pinned surface (tools/list, prompts/list, resources/templates/list), an
   * initialize / server/discover (their result carries the server's instructions), or anything
   * else. Every front calls this for every request it forwards, except the screened ones
   * (screenCall expects those): an answer nothing awaits is dropped.
   */
  expectAnswer(sessionKey: string, id: JsonRpcId, method: string, params: unknown, book?: AnswerBook): void {
    const spec = surfaceOfListing(method);
    let expectation: Expectation = ANY_RESULT;
    if (spec !== undefined) {
      const cursor = isObject(params) ? params.cursor : undefined;
      expectation = {
        kind: 'list',
        surface: spec.surface,
        cursor: typeof cursor === 'string' ? cursor : undefined,
      };
    } else if (carriesInstructions(method)) expectation = { kind: 'instructions', method };
    this.#expect(sessionKey, id, expectation, book);
  }

  /**
   * Remembers an allowed tools/call, so that its answer is recognised and its result checked against
   * the tool's pinned `outputSchema` (when it has one) on whatever stream it arrives.
   */
  expectResult(sessionKey: string, id: JsonRpcId, toolName: string, book?: AnswerBook): void {
    const checked = this.#schemaChecks.checksResult(this.#viewFor(sessionKey), toolName);
    this.#expect(sessionKey, id, { kind: 'call', tool: toolName, checked }, book);
  }

  /**
   * Forgets the awaited answers of requests the gateway answers itself (a refusal of the upstream's
   * answer, a timeout, an answer the upstream left out): a late answer under their ids is then
   * dropped, and no later request under the same id inherits their expectation. Returns the ids
   * still owed an answer, the only ones the gateway may answer: a request already answered (on
   * another stream of its session) is never answered twice. Every id when the scope has no book.
   */
  forgetAnswers(sessionKey: string, ids: readonly JsonRpcId[], book?: AnswerBook): JsonRpcId[] {
    if (ids.length === 0) return [];
    const answers = book ?? this.#sessions.peek(this.#storeKey(sessionKey))?.answers;
    if (answers === undefined) return [...ids];
    return ids.filter((id) => id !== null && answers.take(idKey(id)) !== undefined);
  }

  /**
   * The upstream sent this session something the gateway refused (an answer it could not parse or
   * verify, a timeout): a listing may have been lost with it, so the session's catalog is not
   * trusted for the next call, which lists upstream first (fetch on miss).
   */
  distrust(sessionKey: string): void {
    const state = this.#sessions.peek(this.#storeKey(sessionKey));
    for (const surface of Object.keys(SURFACES) as ListedSurface[]) {
      const catalog = state?.peekCatalog(surface);
      if (catalog !== undefined) catalog.stale = true;
    }
  }

  /** Forgets a session's state (the session ended). */
  forgetSession(sessionKey: string): void {
    this.#sessions.delete(this.#storeKey(sessionKey));
  }

  /**
   * Inspects one valid JSON-RPC message from the upstream: returns what the client receives in its
   * place (the gateway's own envelope of what it decided: a verified, filtered listing, a checked
   * result, an error), or {@link DROPPED} for an answer no request awaits (`book`: the sessionless
   * exchange it travels on; absent: the session's).
   */
  inspectUpstreamMessage(sessionKey: string, message: unknown, book?: AnswerBook): unknown {
    return this.#inspectMessage(sessionKey, message, book).replaced;
  }

  #inspectMessage(
    sessionKey: string,
    message: unknown,
    book: AnswerBook | undefined,
  ): { replaced: unknown; page?: InspectedPage } {
    if (!isResponse(message)) {
      // A list_changed makes that surface's catalog stale: the next decision lists upstream first.
      const method = isObject(message) ? message.method : undefined;
      if (typeof method === 'string') this.#markStale(sessionKey, surfacesChangedBy(method));
      return { replaced: isObject(message) ? ownEnvelope(message as unknown as JsonRpcMessage) : message };
    }
    const answers = this.#book(sessionKey, book);
    // An error under a null id (the upstream could not read a request) answers request 0 where 0
    // awaits its answer (the SDK's clients read it as Number(null)); else no request: relayed as such.
    if (message.id === null && !answers.awaits(idKey(0))) return { replaced: ownEnvelope(message) };
    const { key, id } = answerKey(answers, message.id ?? 0);
    const expected = answers.take(key);
    if (expected === undefined) {
      this.#dropUnsolicited(sessionKey, id);
      return { replaced: DROPPED };
    }
    const answer = ownEnvelope({ ...message, id }) as JsonRpcResponse;
    if (answer.error !== undefined) return { replaced: answer };
    return this.#judgeAnswer(sessionKey, answer, expected);
  }

  /** Judges a result as what its request expected, then for every other surface it carries. */
  #judgeAnswer(
    sessionKey: string,
    answer: JsonRpcResponse,
    expected: Expectation,
  ): { replaced: unknown; page?: InspectedPage } {
    switch (expected.kind) {
      case 'call': {
        const refused = expected.checked ? this.#checkResult(sessionKey, answer, expected.tool) : undefined;
        return { replaced: refused ?? this.#screenSurfaces(sessionKey, answer, undefined) };
      }
      case 'instructions': {
        // What the server states of itself (serverInfo) first: a refused identity answers nothing else.
        const refused = this.judgeStatedArtifact(sessionKey, answer.result, expected.method);
        if (refused !== undefined) {
          const { message, data } = statedArtifactRefusal(refused, this.#config);
          return { replaced: jsonRpcError(answer.id, ErrorCodes.PIN_POLICY_BLOCKED, message, data) };
        }
        const judged = (this.#inspectInstructions(sessionKey, answer) ?? answer) as JsonRpcResponse;
        return { replaced: this.#screenSurfaces(sessionKey, judged, 'instructions') };
      }
      case 'list': {
        if (expected.surface === 'resourceTemplates' && this.scoped())
          noteListedTemplates(this.#state(sessionKey), answer.result, expected.cursor === undefined);
        const catalog = this.#state(sessionKey).catalogOf(expected.surface);
        const spec = SURFACES[expected.surface];
        const inspected = this.#inspectListResult(sessionKey, catalog, answer, expected.cursor, spec);
        const judged = (inspected.replaced ?? answer) as JsonRpcResponse;
        const replaced = this.#screenSurfaces(sessionKey, judged, expected.surface);
        // A scoped page is this principal's alone: never remembered for replay to another.
        const test = this.itemTest(sessionKey, spec.surface);
        if (test !== undefined) return { replaced: withinScope(replaced, spec, test) };
        // Nor is one whose unasked members (prompts beside tools) were filtered to a narrower scope.
        if (inspected.page === undefined || !this.#seesEverything(sessionKey)) return { replaced };
        return { replaced, page: inspected.page };
      }
      default:
        return { replaced: this.#screenSurfaces(sessionKey, answer, undefined) };
    }
  }

  #markStale(sessionKey: string, surfaces: readonly ListedSurface[]): void {
    if (surfaces.length === 0) return;
    const state = this.#sessions.peek(this.#storeKey(sessionKey));
    for (const surface of surfaces) {
      const catalog = state?.peekCatalog(surface);
      if (catalog !== undefined) catalog.stale = true;
    }
  }

  /** Logs an answer no request awaits (dropped: a client never reads it). */
  #dropUnsolicited(sessionKey: string, id: string | number): void {
    logInvalidMessage(
      this.#logger,
      { server: this.#config.name, session: sessionLabel(sessionKey) },
      {
        reason: 'unsolicited',
        problem:
          'an answer no request awaits (a second answer under an answered id, or a result nothing asked for)',
        id,
      },
      false,
    );
  }

  /**
   * Every pinned surface a result carries besides the one its request asked for (`handled`) is
   * judged too, wherever it arrives: a `tools`, `prompts` or `resourceTemplates` member keeps only
   * the items verified against the pin (nothing is recorded in the session's catalog: the client did
   * not ask for that listing), and `instructions` only when they are the pinned ones. A client that
   * reads such a member from an answer it did not expect it in reads nothing unreviewed.
   */
  #screenSurfaces(
    sessionKey: string,
    answer: JsonRpcResponse,
    handled: ListedSurface | 'instructions' | undefined,
  ): JsonRpcResponse {
    const result = answer.result;
    if (!isObject(result)) return answer;
    let screened: Record<string, unknown> | undefined;
    for (const spec of LISTED_SURFACES) {
      if (spec.surface === handled || !(spec.member in result)) continue;
      const pin = surfacePin(this.#viewFor(sessionKey), spec.surface);
      const test = this.itemTest(sessionKey, spec.surface);
      if (pin === undefined && test === undefined) continue;
      const items = result[spec.member];
      let kept = !Array.isArray(items)
        ? []
        : pin === undefined
          ? items
          : inspectToolsPage(pin, items, this.#digester, spec).kept;
      if (test !== undefined) kept = kept.filter((item) => inScope(item, spec, test));
      screened ??= { ...result };
      screened[spec.member] = kept;
      const removed = Array.isArray(items) ? items.length - kept.length : 1;
      if (removed > 0)
        this.#logger.warn(
          {
            event: 'upstream.unexpected_items',
            server: this.#config.name,
            session: sessionLabel(sessionKey),
            surface: spec.surface,
            removed,
          },
          `an answer carried ${spec.member} its request did not ask for: only verified items are kept`,
        );
    }
    const out = screened === undefined ? answer : { ...answer, result: screened };
    if (handled === 'instructions' || !('instructions' in (screened ?? result))) return out;
    return (this.#inspectInstructions(sessionKey, out) ?? out) as JsonRpcResponse;
  }

  /**
   * Decides one text from the upstream: a JSON body, or the data of one SSE event. The text is
   * parsed (once), bounded in depth, every JSON-RPC message in it is validated and inspected, and
   * the client receives the gateway's own serialization of what was decided: `out` (one value per
   * message kept, in order; an invalid message that answers an awaited request becomes a -32042
   * error for its id, an answer no request awaits and any other invalid message are dropped and
   * logged). `book`: the sessionless exchange the text travels on (absent: the session's).
   * A tools/list result whose exact text was verified before under the same pin is recognized
   * without parsing it again (equal text parses to an equal value): `text` then holds the
   * serialization of the one message in `out`.
   */
  inspectUpstreamText(sessionKey: string, text: string, book?: AnswerBook): UpstreamTextVerdict {
    const known = this.#knownListing(sessionKey, text, book);
    if (known !== undefined) return { ok: true, batch: false, out: [known.message], text: known.text };
    return decideUpstreamText(text, {
      invalid: (invalid) => this.#refuseInvalid(sessionKey, invalid, book),
      valid: (message, batch) => {
        const { replaced, page } = this.#inspectMessage(sessionKey, message, book);
        if (!batch && page !== undefined) this.#rememberListing(text, replaced, page);
        return replaced === DROPPED ? undefined : replaced;
      },
    });
  }

  /** A listing text verified before, replayed without parsing (see {@link VerifiedListings}). */
  #knownListing(
    sessionKey: string,
    text: string,
    book: AnswerBook | undefined,
  ): { message: JsonRpcResponse; text: string } | undefined {
    const config = this.#config;
    if (!this.#verified.mayCarryText(text.length) || !this.#replays(sessionKey)) return undefined;
    const envelope = matchResultEnvelope(text);
    if (envelope === undefined || envelope.id === null) return undefined;
    const known = this.#verified.find(config, envelope.resultText);
    if (known === undefined || !this.#replayListing(sessionKey, known, envelope.id, book)) return undefined;
    return {
      message: { jsonrpc: '2.0', id: envelope.id, result: known.result },
      // find() matched the input text, so an unchanged listing (output is input) is this very text.
      text: known.output === known.input ? text : envelope.wrap(known.output),
    };
  }

  /**
   * A listing whose bytes (`slices`, laid end to end) are a compact response around bytes identical
   * to a result verified before under the pin in force, replayed as {@link inspectUpstreamText}
   * replays its text: what the client receives is the envelope around the verified output's shared
   * bytes (`parts`, never copied). Undefined: any other bytes, decided as text. `answering`: only
   * an answer under this id is replayed here (a JSON body answering its own request).
   */
  knownListingBytes(
    sessionKey: string,
    slices: readonly Buffer[],
    length: number,
    book?: AnswerBook,
    answering?: JsonRpcId,
  ): { id: JsonRpcId; parts: readonly (string | Buffer)[] } | undefined {
    const config = this.#config;
    if (!this.#verified.mayCarryBytes(length) || !this.#replays(sessionKey)) return undefined;
    const envelope = matchResultEnvelopeBytes(slices, length);
    if (envelope === undefined || envelope.id === null) return undefined;
    if (answering !== undefined && idKey(answering) !== idKey(envelope.id)) return undefined;
    const known = this.#verified.findBytes(config, slices, envelope.resultStart, envelope.resultEnd);
    if (known === undefined || !this.#replayListing(sessionKey, known, envelope.id, book)) return undefined;
    return { id: envelope.id, parts: [envelope.prefix, known.outputBytes, envelope.suffix] };
  }

  /**
   * The steps of #inspectMessage and #inspectListResult for a listing verified before, minus the
   * pure ones: only the answer to an awaited tools/list page under its very id (false: any other
   * goes the full way).
   */
  #replayListing(
    sessionKey: string,
    known: VerifiedListing,
    id: string | number,
    book: AnswerBook | undefined,
  ): boolean {
    const answers = this.#book(sessionKey, book);
    const key = idKey(id);
    const expected = answers.peek(key);
    if (expected?.kind !== 'list' || expected.surface !== 'tools') return false;
    answers.take(key);
    const catalog = this.#state(sessionKey).catalog;
    const first = expected.cursor === undefined;
    const completion = catalog.addPage(known.config, known.inspection, first, known.last);
    // A whole catalog on one page folds to the same digest every time: the listing remembers it.
    if (completion !== undefined)
      this.#report(sessionKey, catalog, completion, first && known.last ? known : undefined);
    return true;
  }

  /**
   * True when a listing verified before may be replayed to this session: the server's own pin is
   * its (not a principal's catalog, nor one awaiting its first use) and it sees every item.
   */
  #replays(sessionKey: string): boolean {
    const config = this.#config;
    return (
      !awaitsFirstUse(config) && this.#viewFor(sessionKey) === config && this.#seesEverything(sessionKey)
    );
  }

  /**
   * True when the session's principal (if any) sees every item of every surface of this server: a
   * remembered listing may carry unasked members (prompts beside tools), filtered by the scope of
   * the principal it was verified for, so only such a principal's listings are shared.
   */
  #seesEverything(sessionKey: string): boolean {
    return (Object.keys(SURFACES) as ListedSurface[]).every(
      (surface) => this.itemTest(sessionKey, surface) === undefined,
    );
  }

  /** Remembers a single-message listing text and what its verification produced. */
  #rememberListing(text: string, replaced: unknown, page: InspectedPage): void {
    if (awaitsFirstUse(page.config) || !isResponse(replaced) || replaced.error !== undefined) return;
    const envelope = matchResultEnvelope(text);
    if (envelope === undefined) return;
    const serialized = JSON.stringify(replaced.result);
    // An unchanged listing keeps one text for both (half the memory, and a reference check on reuse).
    const output = serialized === envelope.resultText ? envelope.resultText : serialized;
    const inputBytes = Buffer.from(envelope.resultText);
    const outputBytes = output === envelope.resultText ? inputBytes : Buffer.from(output);
    this.#verified.remember({
      ...page,
      input: envelope.resultText,
      output,
      inputBytes,
      outputBytes,
      result: replaced.result,
    });
  }

  /** Logs an upstream message that is not valid JSON-RPC; the request it would answer (if awaited) gets -32042. */
  #refuseInvalid(
    sessionKey: string,
    invalid: InvalidUpstreamMessage,
    book: AnswerBook | undefined,
  ): JsonRpcResponse | undefined {
    const { id } = invalid;
    const answers = this.#book(sessionKey, book);
    const awaited = id === undefined || id === null ? undefined : answerKey(answers, id);
    const known = awaited !== undefined && answers.take(awaited.key) !== undefined;
    this.distrust(sessionKey);
    logInvalidMessage(
      this.#logger,
      { server: this.#config.name, session: sessionLabel(sessionKey) },
      invalid,
      known,
    );
    return known ? unverifiableAnswer(awaited.id, invalid, this.#config.name) : undefined;
  }

  // #knownListing replays what this does for a listing it verified before: keep both in step.
  #inspectListResult(
    sessionKey: string,
    catalog: SessionCatalog,
    message: JsonRpcResponse,
    cursor: string | undefined,
    spec: SurfaceSpec = SURFACES.tools,
  ): { replaced: unknown; page?: InspectedPage } {
    let config = this.#viewFor(sessionKey);
    // A surface the pin does not pin is not enforced: its listing passes as served.
    const pin = surfacePin(config, spec.surface);
    if (pin === undefined) return { replaced: undefined };
    const result = message.result;
    const items = isObject(result) ? result[spec.member] : undefined;
    if (!isObject(result) || !Array.isArray(items)) {
      this.#alerts.emit({
        event: 'catalog.drift',
        server: config.name,
        session: sessionLabel(sessionKey),
        ...surfaceField(spec.surface),
        mode: config.mode,
        drift: [
          {
            kind: 'unverifiable',
            key: '*',
            tool: null,
            pinned: pin.pin.catalog,
            observed: null,
            severity: 'high',
            problem: `${spec.method} result has no ${spec.member} array`,
          },
        ],
      });
      if (config.mode === 'monitor') return { replaced: undefined };
      return {
        replaced: jsonRpcError(
          message.id,
          ErrorCodes.PIN_POLICY_BLOCKED,
          `toolpin blocked the listing: the upstream ${spec.method} result is not valid`,
          { reason: 'unverifiable', server: config.name },
        ),
      };
    }
    const last = typeof result.nextCursor !== 'string';
    if (spec.surface !== 'tools') {
      const inspection = inspectToolsPage(pin, items, this.#digester, spec);
      const completion = catalog.addPage(pin, inspection, cursor === undefined, last);
      if (completion !== undefined) this.#report(sessionKey, catalog, completion, undefined, spec);
      return { replaced: { ...message, result: { ...result, [spec.member]: inspection.kept } } };
    }
    // Trust on first use: the listing that completes the first observation becomes the pin first.
    const own = config === this.#config;
    const trusted = this.#firstUse.observePage(config, sessionKey, items, cursor === undefined, last, own);
    if (trusted !== undefined) config = this.#trust(sessionKey, config, trusted);
    const inspection = inspectToolsPage(config, items, this.#digester);
    this.#unpinned.note(config, inspection.unpinned);
    const completion = catalog.addPage(config, inspection, cursor === undefined, last);
    if (completion !== undefined) this.#report(sessionKey, catalog, completion);
    // The client receives the value that was verified, re-serialized, never the upstream bytes.
    return {
      replaced: { ...message, result: { ...result, tools: inspection.kept } },
      page: { config, inspection, last },
    };
  }

  #report(
    sessionKey: string,
    catalog: SessionCatalog,
    completion: CatalogCompletion,
    wholeListing?: VerifiedListing,
    spec: SurfaceSpec = SURFACES.tools,
  ): void {
    const config = this.#viewFor(sessionKey);
    const pin = surfacePin(config, spec.surface) ?? config;
    const session = sessionLabel(sessionKey);
    if (completion.findings.length === 0) {
      const entries = (): { key: string; digest: string }[] =>
        [...catalog.tools.values()].map((tool) => ({ key: tool.key, digest: tool.digest ?? '' }));
      const fold = {
        profile: pin.profile,
        ...(spec.overflowKey === undefined ? {} : { overflowKey: spec.overflowKey }),
      };
      const digest = wholeListing?.catalogDigest ?? foldCatalog(entries(), fold).digest;
      if (wholeListing !== undefined) wholeListing.catalogDigest = digest;
      this.#alerts.emit(
        spec.surface === 'tools'
          ? {
              event: 'catalog.verified',
              server: config.name,
              session,
              catalog: digest,
              tools: completion.toolCount,
            }
          : {
              event: 'catalog.verified',
              surface: spec.surface,
              server: config.name,
              session,
              catalog: digest,
              items: completion.toolCount,
            },
      );
      return;
    }
    this.#alerts.emit({
      event: 'catalog.drift',
      server: config.name,
      session,
      ...surfaceField(spec.surface),
      mode: config.mode,
      drift: completion.findings,
      ...(completion.findingsOmitted > 0 ? { findingsOmitted: completion.findingsOmitted } : {}),
    });
  }

  /**
   * Judges the instructions of an initialize / server/discover result against the pin: when they
   * differ (or are not pinned while the pin pins their absence), the result reaches the client
   * without them (enforce) and `catalog.drift` names the change. Undefined: pass it unchanged.
   */
  #inspectInstructions(sessionKey: string, message: JsonRpcResponse): unknown {
    const result = message.result;
    if (!isObject(result)) return undefined;
    const raw = result.instructions;
    // Instructions that are not a string (an array, an object: a lax client joins them into its
    // system prompt) can never be the pinned text: judged as their JSON, marked, and always left out
    // in enforce mode (absence or null is "none", as pinned).
    const malformed = raw !== undefined && raw !== null && typeof raw !== 'string';
    const observed =
      typeof raw === 'string' ? raw : malformed ? `(not a string) ${JSON.stringify(raw)}` : undefined;
    const delivered = this.#judgeInstructions(sessionKey, observed);
    if (malformed ? delivered !== undefined : delivered === observed || !('instructions' in result))
      return undefined;
    const { instructions: _dropped, ...rest } = result;
    return { ...message, result: rest };
  }

  /**
   * Judges what an initialize / server/discover result states of the server (`serverInfo`) against
   * the pin's `{kind: server}` artifact (docs/pin-lifecycle.md#the-artifact), and logs it. Every
   * such answer the checkpoint inspects is judged here, and so is the initialize of the gateway's
   * own client (a shared upstream: ingress/statelessSession.ts). Returns the verdict when the pin's
   * drift policy refuses it (enforce mode, low drift `block-server`), else undefined.
   */
  judgeStatedArtifact(sessionKey: string, result: unknown, via: string): RefusedStatedArtifact | undefined {
    return checkStatedArtifact(this.#config, this.#logger, sessionKey, result, via);
  }

  /**
   * Judges what an upstream the gateway opened itself stated at its initialize (`serverInfo`: the
   * shared upstream of a bridged route's 2026-07-28 clients, an aggregate member) as
   * {@link judgeStatedArtifact} judges an answer, once per session and pin: the upstream is judged
   * when it opens, and every request forwarded on it asks again, so a reloaded pin is in force for
   * the next one. Returns the refusal, if any.
   */
  refusesOwnUpstream(sessionKey: string, serverInfo: unknown): RefusedStatedArtifact | undefined {
    const state = this.#state(sessionKey);
    const seen = state.statedServer;
    if (seen !== undefined && seen.under === this.#config) return seen.refused;
    const stated = serverInfo === undefined ? {} : { serverInfo };
    const refused = this.judgeStatedArtifact(sessionKey, stated, 'initialize');
    state.statedServer = { under: this.#config, refused };
    return refused;
  }

  /**
   * The instructions a front that speaks for the upstream itself (the bridged 2026-07-28 fronts,
   * ingress/forwardingServer.ts) may hand its client: the upstream's own when they are pinned and
   * unchanged (or not pinned at all), else none. Judged (and reported) once per session and pin.
   */
  deliveredInstructions(sessionKey: string, observed: string | undefined): string | undefined {
    const state = this.#state(sessionKey);
    const seen = state.instructions;
    const under = this.#viewFor(sessionKey);
    if (seen !== undefined && seen.under === under && seen.observed === observed) return seen.delivered;
    const delivered = this.#judgeInstructions(sessionKey, observed);
    state.instructions = { under, observed, delivered };
    return delivered;
  }

  /** The instructions to deliver (the observed ones, or none when they drifted), with the catalog event. */
  #judgeInstructions(sessionKey: string, observed: string | undefined): string | undefined {
    if (!this.seesServer(sessionKey)) return undefined;
    const config: PinView = this.#viewFor(sessionKey);
    const pinned = config.pin.instructions;
    if (pinned === undefined) return observed;
    const digest = digestInstructions(observed);
    const session = sessionLabel(sessionKey);
    if (digest === pinned) {
      this.#alerts.emit({
        event: 'catalog.verified',
        surface: 'instructions',
        server: config.name,
        session,
        catalog: digest,
        items: observed === undefined ? 0 : 1,
      });
      return observed;
    }
    this.#alerts.emit({
      event: 'catalog.drift',
      server: config.name,
      session,
      surface: 'instructions',
      mode: config.mode,
      drift: [instructionsFinding(config, pinned, observed, digest)],
    });
    return config.mode === 'monitor' ? observed : undefined;
  }

  /**
   * Checks a tools/call result's `structuredContent` against the tool's pinned `outputSchema`;
   * returns the error that replaces it (`onBadOutput: block`), or undefined to pass it on.
   */
  #checkResult(sessionKey: string, message: JsonRpcResponse, toolName: string): JsonRpcResponse | undefined {
    const config = this.#viewFor(sessionKey);
    const decision = this.#schemaChecks.decideResult(config, message.result, toolName);
    if (decision === undefined) return undefined;
    const { id } = message;
    const session = sessionLabel(sessionKey);
    traceDecision(config.name, 'tools', toolName, 'result', decision);
    if (decision.kind === 'allow') {
      if (decision.flagged !== undefined)
        this.#alerts.emit({
          event: 'call.flagged',
          server: config.name,
          session,
          id,
          decision: decision.flagged,
        });
      return undefined;
    }
    this.#alerts.emit({ event: 'call.blocked', server: config.name, session, id, decision: decision.data });
    return jsonRpcError(id, ErrorCodes.PIN_POLICY_BLOCKED, decision.message, decision.data);
  }

  /** Checks the arguments of a call the pin allows against the tool's pinned `inputSchema`. */
  #checkArguments(sessionKey: string, decision: CallDecision, toolName: string, args: unknown): CallDecision {
    return this.#schemaChecks.decideArguments(this.#viewFor(sessionKey), decision, toolName, args);
  }

  /**
   * Decides a tools/call from the catalog this session was served; when the gateway has not seen
   * it, or it went stale, the catalog is listed upstream first. A call the pin allows is then
   * checked against the tool's pinned `inputSchema` (`args`: the request's `params.arguments`).
   */
  async decideCall(
    sessionKey: string,
    toolName: string,
    refresh: CatalogRefresh,
    args?: unknown,
    spec: SurfaceSpec = SURFACES.tools,
  ): Promise<CallDecision> {
    const outOfScope = this.decideScope(sessionKey, toolName, spec);
    if (outOfScope !== undefined) return outOfScope;
    const known = this.decideKnownCall(sessionKey, toolName, args, spec);
    if (known !== undefined) return known;
    const catalog = this.#state(sessionKey).catalogOf(spec.surface);
    try {
      await this.#refresh(sessionKey, catalog, refresh, spec);
    } catch (error) {
      this.#logger.warn(
        {
          event: 'catalog.fetch_failed',
          server: this.#config.name,
          session: sessionLabel(sessionKey),
          // Why, without a stack: a listing the upstream refused or cut short is not a bug.
          failure: {
            message: errorSummary(error),
            ...(error instanceof GatewayError ? { code: error.code, data: error.data } : {}),
          },
        },
        'fetch on miss failed',
      );
      catalog.stale = true;
      return decideCall(this.#pinOf(sessionKey, spec), undefined, toolName, spec);
    }
    return this.#decideOn(sessionKey, catalog, toolName, args, spec);
  }

  /** The pin a request of this surface is decided under (only surfaces with a pin are screened). */
  #pinOf(sessionKey: string, spec: SurfaceSpec): PinView {
    const config = this.#viewFor(sessionKey);
    return surfacePin(config, spec.surface) ?? config;
  }

  #decideOn(
    sessionKey: string,
    catalog: SessionCatalog,
    name: string,
    args: unknown,
    spec: SurfaceSpec,
  ): CallDecision {
    const decision = decideCall(this.#pinOf(sessionKey, spec), catalog, name, spec);
    return spec.surface === 'tools' ? this.#checkArguments(sessionKey, decision, name, args) : decision;
  }

  /**
   * The items of a surface the session's principal may see and use on this server: undefined for
   * every one (no `principals` block, or a scope of `'*'`). A key that speaks for no principal
   * while principals are configured has none (fail closed).
   */
  itemTest(sessionKey: string, surface: ListedSurface): ItemTest | undefined {
    const scopes = this.#scopes?.scopes;
    return scopes?.itemTest(principalOfKey(sessionKey), this.#config.name, surface);
  }

  /**
   * True when the session's principal may see anything of this server (always without scopes): a
   * server out of its scope gives it no instructions either.
   */
  seesServer(sessionKey: string): boolean {
    const scopes = this.#scopes?.scopes;
    return scopes === undefined || scopes.seesServer(principalOfKey(sessionKey), this.#config.name);
  }

  /** True while principals are configured: every request that uses an item is screened (its scope checked). */
  scoped(): boolean {
    return this.#scopes?.scopes !== undefined;
  }

  /**
   * The refusal of a request using an item outside the session's principal's scope (`not_in_scope`,
   * in every mode: a scope is who may use what, not drift), before anything reaches the upstream;
   * undefined when the item is in scope.
   */
  decideScope(sessionKey: string, name: string, spec: SurfaceSpec): CallDecision | undefined {
    const test = this.itemTest(sessionKey, spec.surface);
    if (test === undefined || test(name)) return undefined;
    const config = this.#config;
    const data: DenyData = {
      reason: 'not_in_scope',
      server: config.name,
      ...subjectOf(spec, name),
      key: null,
      pinned: null,
      observed: null,
      principal: principalOfKey(sessionKey) ?? null,
    };
    return { kind: 'deny', message: refusalMessage(config, data), data };
  }

  /**
   * The refusal of a resources/read whose URI matches a resource template out of the session's
   * principal's scope (policy/templateMatch.ts): among the templates the session's listings carried
   * and the pin's (its own, the principal's). Undefined when the URI matches none of those out of
   * scope: a URI no known template matches goes upstream as before.
   */
  decideRead(sessionKey: string, uri: string): { template: string; decision: CallDecision } | undefined {
    const test = this.itemTest(sessionKey, 'resourceTemplates');
    if (test === undefined) return undefined;
    const state = this.#state(sessionKey);
    const known = new Set([
      ...(state.listedTemplates ?? []),
      ...(state.peekCatalog('resourceTemplates')?.tools.keys() ?? []),
    ]);
    for (const pin of new Set([this.#config, this.#viewFor(sessionKey)]))
      for (const definition of Object.values(pin.templateDefinitions ?? {}))
        if (typeof definition.uriTemplate === 'string') known.add(definition.uriTemplate);
    for (const template of known) {
      if (test(template) || !uriMatchesTemplate(template, uri)) continue;
      const decision = this.decideScope(sessionKey, template, SURFACES.resourceTemplates);
      if (decision !== undefined) return { template, decision };
    }
    return undefined;
  }

  /**
   * True when requests using this surface's items are screened: tools always, others when pinned
   * (by the session's own catalog, with `sessionKey`).
   */
  screens(spec: SurfaceSpec, sessionKey?: string): boolean {
    const config = sessionKey === undefined ? this.#config : this.#viewFor(sessionKey);
    return surfacePin(config, spec.surface) !== undefined;
  }

  /**
   * Puts a pin trusted on first use in force: the server's own, or, for a principal's view, the
   * principal's entry (written into the pin file's `principals`). Returns the view now in force.
   */
  #trust(sessionKey: string, view: ServerConfig, trusted: ServerConfig): ServerConfig {
    const principal = principalOfKey(sessionKey);
    if (view === this.#config || principal === undefined) return (this.#config = trusted);
    const pins = { ...this.#config.principalPins, [principal]: pinnedCatalogOf(trusted) };
    this.#config = Object.freeze({ ...this.#config, principalPins: pins });
    this.#firstUse.persistPrincipal(this.#config, principal, trusted);
    return this.#viewFor(sessionKey);
  }

  /**
   * Decides a tools/call when the session's catalog can decide it as it is; undefined when the
   * catalog must be listed upstream first (decideCall does that).
   */
  decideKnownCall(
    sessionKey: string,
    toolName: string,
    args?: unknown,
    spec: SurfaceSpec = SURFACES.tools,
  ): CallDecision | undefined {
    const outOfScope = this.decideScope(sessionKey, toolName, spec);
    if (outOfScope !== undefined) return outOfScope;
    return this.knowsCatalogFor(sessionKey, toolName, spec)
      ? this.#decideOn(sessionKey, this.#state(sessionKey).catalogOf(spec.surface), toolName, args, spec)
      : undefined;
  }

  /** True when a request naming `name` can be decided from the session's catalog as it is (no listing first). */
  knowsCatalogFor(sessionKey: string, name: string, spec: SurfaceSpec = SURFACES.tools): boolean {
    // A request outside the principal's scope is refused as it is: nothing to list first.
    if (this.decideScope(sessionKey, name, spec) !== undefined) return true;
    const catalog = this.#state(sessionKey).catalogOf(spec.surface);
    return (
      catalog.usable &&
      catalog.judgedUnder === this.#pinOf(sessionKey, spec) &&
      !this.#sessions.needsRevalidation(catalog) &&
      (catalog.complete || catalog.tools.has(name))
    );
  }

  async #refresh(
    sessionKey: string,
    catalog: SessionCatalog,
    refresh: CatalogRefresh,
    spec: SurfaceSpec,
  ): Promise<void> {
    catalog.refreshing ??= (async () => {
      try {
        const pages = await reportContact(this.#alerts.telemetry, this.#config.name, () => refresh(spec));
        for (const page of pages) {
          const message: JsonRpcResponse = { jsonrpc: '2.0', id: null, result: page.result };
          const { replaced } = this.#inspectListResult(sessionKey, catalog, message, page.cursor, spec);
          if (isResponse(replaced) && replaced.error !== undefined) throw new Error(replaced.error.message);
        }
      } finally {
        catalog.refreshing = undefined;
      }
    })();
    await catalog.refreshing;
  }
}

/**
 * Records the uriTemplates a resources/templates/list answer carried, in scope or not, as served
 * (decideRead matches a read's URI against them); a first page starts the record afresh.
 */
function noteListedTemplates(state: SessionState, result: unknown, first: boolean): void {
  const items = isObject(result) ? result.resourceTemplates : undefined;
  if (first || state.listedTemplates === undefined) state.listedTemplates = new Set();
  for (const item of Array.isArray(items) ? items : [])
    if (isObject(item) && typeof item.uriTemplate === 'string') state.listedTemplates.add(item.uriTemplate);
}

/** The `surface` member of a catalog event: absent for tools (their events are as they were). */
function surfaceField(surface: ListedSurface): { surface?: 'prompts' | 'resourceTemplates' } {
  return surface === 'tools' ? {} : { surface };
}

/** The finding of instructions that differ from the pinned ones, explained when the pin holds their text. */
function instructionsFinding(
  pin: PinView,
  pinned: string,
  observed: string | undefined,
  digest: string,
): DriftFinding {
  const base = { key: 'instructions', tool: null, pinned, observed: digest, severity: 'high' as const };
  // The digest of no instructions is pinned: the server now sends some.
  if (pinned === digestInstructions(undefined)) return { kind: 'added', ...base };
  // As a removed tool: nothing reaches the client that was not reviewed.
  if (observed === undefined) return { kind: 'removed', ...base, severity: 'low' };
  const text =
    pin.instructions === undefined
      ? []
      : textChanges({ instructions: pin.instructions }, { instructions: observed }, ['/instructions']);
  return {
    kind: 'changed',
    ...base,
    members: ['instructions'],
    paths: ['/instructions'],
    ...(text.length > 0 ? { text } : {}),
  };
}

/** How a refusal names the item a request uses: a tool, a prompt, or a template by its uriTemplate. */
function subjectOf(spec: SurfaceSpec, name: string): Pick<DenyData, 'tool' | 'prompt' | 'template'> {
  if (spec.surface === 'tools') return { tool: name };
  return spec.surface === 'prompts' ? { tool: null, prompt: name } : { tool: null, template: name };
}

/** True when a listed item is named (its name, or a template's uriTemplate) and that name is in scope. */
function inScope(item: unknown, spec: SurfaceSpec, test: ItemTest): boolean {
  const name = isObject(item) ? item[spec.nameMember] : undefined;
  return typeof name === 'string' && test(name);
}

/** A listing answer with only the items in the principal's scope (an error, or no array: as it is). */
function withinScope(replaced: unknown, spec: SurfaceSpec, test: ItemTest): unknown {
  if (!isResponse(replaced) || !isObject(replaced.result)) return replaced;
  const items = replaced.result[spec.member];
  if (!Array.isArray(items)) return replaced;
  const kept = items.filter((item) => inScope(item, spec, test));
  return { ...replaced, result: { ...replaced.result, [spec.member]: kept } };
}
