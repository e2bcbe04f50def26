/**
 * Polls `probe` every 25 ms until it yields a value (anything but undefined) and resolves with it;
 * gives up after `attempts` tries (400: about ten seconds), throwing an error that names `what`.
 * For what a test cannot await as an event: a log line, a file written, a reload applied.
 */
export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  attempts = 400,
): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}
