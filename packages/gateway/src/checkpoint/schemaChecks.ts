import { encodeToolKey } from '@toolpin/digest';
import type { ServerConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { decideArguments, decideOutput } from '../policy/decideArguments.js';
import type { CallDecision } from '../policy/decision.js';
import { withoutOptionalNulls } from '../policy/optionalNulls.js';
import type { SchemaCheck } from '../policy/schemaProblems.js';
import { validationModeOf } from '../policy/validationMode.js';
import { PinnedSchemas } from '../state/pinnedSchemas.js';
import { isObject } from '../wire/isObject.js';

/**
 * A server's checks of calls and results against the pinned schemas: the decision for a call's
 * arguments and for a result's structured content, and the one-time log line for a tool that
 * cannot be checked (no definition, a schema that cannot be compiled).
 */
export class SchemaChecks {
  readonly #schemas: PinnedSchemas;
  readonly #logger: GatewayLogger;
  /** `why` + fold key of the tools logged as unchecked under the pin in force. */
  readonly #noted = new Set<string>();

  constructor(logger: GatewayLogger, schemas: PinnedSchemas = new PinnedSchemas()) {
    this.#logger = logger;
    this.#schemas = schemas;
  }

  /** A new pin is in force: tools that cannot be checked are logged again. */
  reset(): void {
    this.#noted.clear();
  }

  /** True when a result of `toolName` is checked (a pinned outputSchema, not opted out). */
  checksResult(config: ServerConfig, toolName: string): boolean {
    const key = encodeToolKey(toolName);
    return config.definitions[key]?.outputSchema !== undefined && validationModeOf(config, key) !== 'off';
  }

  /** The decision for a call the pin decided: an allowed one is checked against the pinned inputSchema. */
  decideArguments(
    config: ServerConfig,
    decision: CallDecision,
    toolName: string,
    args: unknown,
  ): CallDecision {
    if (decision.kind !== 'allow') return decision;
    // Monitor mode flags a drifted call and lets it through: that flag is the finding. In enforce
    // mode a flagged call (a low drift under `low: flag`) is still checked: the pin allowed it.
    if (decision.flagged !== undefined && config.mode === 'monitor') return decision;
    const key = encodeToolKey(toolName);
    // A call without arguments reaches the server as no arguments: checked as an empty object.
    const check = this.#checkArguments(config, key, args === undefined ? {} : args);
    this.#noteUnchecked(config, key, toolName, check);
    const checked = decideArguments(config, toolName, check);
    // Arguments that fit keep the call's own decision (and its flag).
    return checked.kind === 'deny' || decision.flagged === undefined ? checked : decision;
  }

  /**
   * The check of a call's arguments: as sent, and, when they misfit under the `lenient` reading,
   * again with null for a declared, non-required property read as absent (withoutOptionalNulls).
   * They fit when either reading fits; the arguments forwarded are always the ones sent.
   */
  #checkArguments(config: ServerConfig, key: string, args: unknown): SchemaCheck {
    const check = this.#schemas.check(config, key, 'input', args);
    if (check.kind !== 'misfit' || validationModeOf(config, key) !== 'lenient') return check;
    const read = withoutOptionalNulls(config.definitions[key]?.inputSchema, args);
    // No null to read otherwise: the misfit stands as found.
    return read === args ? check : this.#schemas.check(config, key, 'input', read);
  }

  /** The decision for a tools/call result (undefined: it passes), from its structuredContent. */
  decideResult(config: ServerConfig, result: unknown, toolName: string): CallDecision | undefined {
    const content = isObject(result) ? result.structuredContent : undefined;
    // An error result (isError) need not carry structured content (MCP 2025-06-18, tools); when it
    // does, the content is checked like any other (the flag must not carry unchecked data).
    if (isObject(result) && result.isError === true && content === undefined) return undefined;
    const key = encodeToolKey(toolName);
    let check = this.#schemas.check(config, key, 'output', content);
    // A tool with an outputSchema must return structured content (MCP 2025-06-18): its absence is
    // a misfit of its own, whatever the schema would say of no value.
    if (content === undefined && (check.kind === 'fits' || check.kind === 'misfit'))
      check = { kind: 'misfit', problems: [{ pointer: '', keyword: 'required' }] };
    this.#noteUnchecked(config, key, toolName, check);
    return decideOutput(config, toolName, check);
  }

  /** Logs once per pin and tool why its calls or results are not checked against a pinned schema. */
  #noteUnchecked(config: ServerConfig, key: string, toolName: string, check: SchemaCheck): void {
    if (check.kind !== 'uncompilable' && check.kind !== 'unchecked') return;
    const why = check.kind === 'unchecked' ? check.why : 'uncompilable';
    if (why === 'no_schema' || why === 'opted_out') return;
    const noted = `${why} ${key}`;
    if (this.#noted.has(noted)) return;
    this.#noted.add(noted);
    this.#logger.warn(
      {
        event: 'schema.unchecked',
        server: config.name,
        tool: toolName,
        why,
        ...(check.kind === 'uncompilable' ? { problem: check.problem } : {}),
      },
      why === 'no_definition'
        ? 'the pin records no definition for this tool: its calls are not checked against a schema'
        : 'a pinned schema of this tool cannot be compiled: its calls are refused as unverifiable',
    );
  }
}
