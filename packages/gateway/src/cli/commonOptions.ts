import type { Command } from 'commander';
import { CliInputError } from './cliInputError.js';
import { splitCommandLine } from '../transports/commandLine.js';
import { SERVER_NAME_PATTERN } from '../config/pinFileSchema.js';
import { DEFAULT_TIMEOUT_MS } from '../defaults.js';
import { redactUrl } from '../wire/redactUrl.js';
import { LOG_FORMATS, type LogFormat } from '../observe/logger.js';

/** Commander's collector for a repeatable option (`--header a --header b`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Parses `--header "Name: value"` options into a record. Throws CliInputError on a malformed one. */
export function parseHeaderOptions(values: readonly string[] = []): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = colon < 0 ? '' : value.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(value)) {
      throw new CliInputError(`--header ${JSON.stringify(value)}: expected "Name: value"`);
    }
    headers[name] = value.slice(colon + 1).trim();
  }
  return headers;
}

/** Parses a port flag (`--port`, `--admin-port`). Throws CliInputError, naming the flag, unless 0–65535. */
export function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(port) || port > 65535)
    throw new CliInputError(`${flag} ${value}: expected a port number from 0 to 65535`);
  return port;
}

/** Checks `--name`: a server name as pin files take it (also its route), before anything is listed. */
export function parseServerName(name: string): string {
  if (!SERVER_NAME_PATTERN.test(name))
    throw new CliInputError(
      `--name ${JSON.stringify(name)}: expected 1-64 letters, digits, "_", "." or "-", starting alphanumeric`,
    );
  return name;
}

/** Checks an upstream URL flag (`--url`, `--upstream`): an absolute http(s) URL, named in the error. */
export function parseHttpUrl(flag: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  // Text that is no URL is the person's own typo, echoed as typed (on their own terminal) so they
  // see it; a URL of another scheme may carry credentials, and is shown redacted.
  if (url === undefined)
    throw new CliInputError(
      `${flag} ${JSON.stringify(value)}: not a URL; expected an http:// or https:// URL`,
    );
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliInputError(`${flag} ${redactUrl(value)}: expected an http:// or https:// URL`);
  return value;
}

/** Checks `--command`: a command line split as a shell would (quotes, escapes) into a program and its arguments. */
export function parseCommandOption(command: string | undefined): string[] {
  let argv: string[];
  try {
    argv = splitCommandLine(command ?? '');
  } catch (error) {
    throw new CliInputError(`--command: ${(error as Error).message}`);
  }
  if (argv.length === 0) throw new CliInputError('--command: expected a program to run');
  return argv;
}

/** Parses `--timeout <ms>`. Throws CliInputError unless it is a positive integer. */
export function parseTimeout(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms <= 0)
    throw new CliInputError(`--timeout ${value}: expected a positive number of milliseconds`);
  return ms;
}

/** Parses `--capabilities <json>` (client capabilities declared at initialize). Throws CliInputError unless it is a JSON object. */
export function parseCapabilities(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliInputError(`--capabilities: not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliInputError('--capabilities: expected a JSON object such as {"sampling":{}}');
  return value as Record<string, unknown>;
}

/** The options of every command that lists a pinned server's live catalog (check, approve). */
export function addListingOptions(command: Command): Command {
  return command
    .option(
      '--header <header>',
      '"Name: value" sent while listing, beside the pin\'s own headers (repeatable)',
      collect,
      [],
    )
    .option('--capabilities <json>', 'client capabilities declared at initialize (as when pinning)')
    .option('--timeout <ms>', 'per request timeout', String(DEFAULT_TIMEOUT_MS));
}

/** Parses `--log-format`. Throws CliInputError unless json or pretty; undefined: chosen by the destination. */
export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined) return undefined;
  if (!(LOG_FORMATS as readonly string[]).includes(value))
    throw new CliInputError(`--log-format ${value}: expected ${LOG_FORMATS.join(' or ')}`);
  return value as LogFormat;
}
