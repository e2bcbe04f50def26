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
