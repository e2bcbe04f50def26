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
