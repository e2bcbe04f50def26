import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * What `promise` rejects with, checked to be a `type` (the test fails if the promise resolves, or
 * rejects with anything else): `(await rejectionOf(client.callTool(…), McpError)).code`.
 */
export async function rejectionOf<E>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(type);
  return outcome as E;
}

/**
 * The error a tool call through `client` fails with, or undefined when it succeeded; any error
 * other than an McpError is rethrown (the test fails with it).
 */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown> = { text: 'hi' },
): Promise<McpError | undefined> {
  return client.callTool({ name, arguments: args }).then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof McpError) return error;
      throw error;
    },
  );
}

/**
 * The JSON-RPC error a rejected SDK request carries (both SDKs throw it with `code` and `data`); the
 * test fails if the request succeeds.
 */
export async function refusal(
  promise: Promise<unknown>,
): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const { code, data } = error as { code: number; data: Record<string, unknown> };
    return { code, data: data ?? {} };
  }
  throw new Error('expected a refusal');
}

/** The text parts of a tool result, joined. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((part) => part.text ?? '').join('');
}
