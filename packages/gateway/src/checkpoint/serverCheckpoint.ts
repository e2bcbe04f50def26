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
import type { CallDecision } from '../policy/decision.js';
import type { PageInspection } from '../policy/inspectToolsPage.js';
import { decideCall } from '../policy/decideCall.js';
import { inspectToolsPage } from '../policy/inspectToolsPage.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import {
  SURFACES,
  carriesInstructions,
  surfaceOfListing,
  surfacePin,
  surfacesChangedBy,
  type ListedSurface,
  type SurfaceSpec,
} from '../policy/pinSurface.js';
import type { PinView } from '../policy/pinView.js';
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
import { FirstUseRecorder } from './trustOnFirstUse.js';
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

  constructor(options: ServerCheckpointOptions) {
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

  #state(sessionKey: string): SessionState {
    return this.#sessions.get(`${this.#config.name}\n${sessionKey}`);
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
    } else if (carriesInstructions(method)) expectation = { kind: 'instructions' };
    this.#expect(sessionKey, id, expectation, book);
  }

  /**
   * Remembers an allowed tools/call, so that its answer is recognised and its result checked against
   * the tool's pinned `outputSchema` (when it has one) on whatever stream it arrives.
   */
  expectResult(sessionKey: string, id: JsonRpcId, toolName: string, book?: AnswerBook): void {
    const checked = this.#schemaChecks.checksResult(this.#config, toolName);
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
    const answers = book ?? this.#sessions.peek(`${this.#config.name}\n${sessionKey}`)?.answers;
    if (answers === undefined) return [...ids];
    return ids.filter((id) => id !== null && answers.take(idKey(id)) !== undefined);
  }

  /**
   * The upstream sent this session something the gateway refused (an answer it could not parse or
   * verify, a timeout): a listing may have been lost with it, so the session's catalog is not
   * trusted for the next call, which lists upstream first (fetch on miss).
   */
  distrust(sessionKey: string): void {
    const state = this.#sessions.peek(`${this.#config.name}\n${sessionKey}`);
    for (const surface of Object.keys(SURFACES) as ListedSurface[]) {
      const catalog = state?.peekCatalog(surface);
      if (catalog !== undefined) catalog.stale = true;
    }
  }

  /** Forgets a session's state (the session ended). */
  forgetSession(sessionKey: string): void {
    this.#sessions.delete(`${this.#config.name}\n${sessionKey}`);
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
        const judged = (this.#inspectInstructions(sessionKey, answer) ?? answer) as JsonRpcResponse;
        return { replaced: this.#screenSurfaces(sessionKey, judged, 'instructions') };
      }
      case 'list': {
        const catalog = this.#state(sessionKey).catalogOf(expected.surface);
        const spec = SURFACES[expected.surface];
        const inspected = this.#inspectListResult(sessionKey, catalog, answer, expected.cursor, spec);
        const judged = (inspected.replaced ?? answer) as JsonRpcResponse;
        const replaced = this.#screenSurfaces(sessionKey, judged, expected.surface);
        return inspected.page === undefined ? { replaced } : { replaced, page: inspected.page };
      }
      default:
        return { replaced: this.#screenSurfaces(sessionKey, answer, undefined) };
    }
  }

  #markStale(sessionKey: string, surfaces: readonly ListedSurface[]): void {
    if (surfaces.length === 0) return;
    const state = this.#sessions.peek(`${this.#config.name}\n${sessionKey}`);
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
    for (const spec of Object.values(SURFACES)) {
      if (spec.surface === handled || !(spec.member in result)) continue;
      const pin = surfacePin(this.#config, spec.surface);
      if (pin === undefined) continue;
      const items = result[spec.member];
      const kept = Array.isArray(items) ? inspectToolsPage(pin, items, this.#digester, spec).kept : [];
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
    if (awaitsFirstUse(config)) return undefined;
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
    if (awaitsFirstUse(config)) return undefined;
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
    let config = this.#config;
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
    const trusted = this.#firstUse.observePage(config, sessionKey, items, cursor === undefined, last);
    if (trusted !== undefined) config = this.#config = trusted;
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
    const config = this.#config;
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
   * The instructions a front that speaks for the upstream itself (the bridged 2026-07-28 fronts,
   * ingress/forwardingServer.ts) may hand its client: the upstream's own when they are pinned and
   * unchanged (or not pinned at all), else none. Judged (and reported) once per session and pin.
   */
  deliveredInstructions(sessionKey: string, observed: string | undefined): string | undefined {
    const state = this.#state(sessionKey);
    const seen = state.instructions;
    if (seen !== undefined && seen.under === this.#config && seen.observed === observed)
      return seen.delivered;
    const delivered = this.#judgeInstructions(sessionKey, observed);
    state.instructions = { under: this.#config, observed, delivered };
    return delivered;
  }

  /** The instructions to deliver (the observed ones, or none when they drifted), with the catalog event. */
  #judgeInstructions(sessionKey: string, observed: string | undefined): string | undefined {
    const config: PinView = this.#config;
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
    const config = this.#config;
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
  #checkArguments(decision: CallDecision, toolName: string, args: unknown): CallDecision {
    return this.#schemaChecks.decideArguments(this.#config, decision, toolName, args);
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
      return decideCall(this.#pinOf(spec), undefined, toolName, spec);
    }
    return this.#decideOn(catalog, toolName, args, spec);
  }

  /** The pin a request of this surface is decided under (only surfaces with a pin are screened). */
  #pinOf(spec: SurfaceSpec): PinView {
    return surfacePin(this.#config, spec.surface) ?? this.#config;
  }

  #decideOn(catalog: SessionCatalog, name: string, args: unknown, spec: SurfaceSpec): CallDecision {
    const decision = decideCall(this.#pinOf(spec), catalog, name, spec);
    return spec.surface === 'tools' ? this.#checkArguments(decision, name, args) : decision;
  }

  /** True when requests using this surface's items are screened: tools always, others when pinned. */
  screens(spec: SurfaceSpec): boolean {
    return surfacePin(this.#config, spec.surface) !== undefined;
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
    return this.knowsCatalogFor(sessionKey, toolName, spec)
      ? this.#decideOn(this.#state(sessionKey).catalogOf(spec.surface), toolName, args, spec)
      : undefined;
  }

  /** True when a request naming `name` can be decided from the session's catalog as it is (no listing first). */
  knowsCatalogFor(sessionKey: string, name: string, spec: SurfaceSpec = SURFACES.tools): boolean {
    const catalog = this.#state(sessionKey).catalogOf(spec.surface);
    return (
      catalog.usable &&
      catalog.judgedUnder === this.#pinOf(spec) &&
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
