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

/** Options of {@link untilStill}. */
export interface StillOptions {
  /** A value that is final at once (e.g. the whole count reached). */
  readonly final?: (value: number) => boolean;
  /** Only a value this accepts counts as settled (e.g. past 0: it started). @default any */
  readonly ready?: (value: number) => boolean;
}

/**
 * Polls `read` as {@link until} does until its value has stayed the same for `polls` polls in a
 * row (and is `ready`), or is `final`; resolves with it. For what stops by itself with no event to
 * await: a flood held back, a writer blocked, output that stopped coming.
 */
export async function untilStill(
  read: () => number | Promise<number>,
  polls: number,
  what: string,
  { final = () => false, ready = () => true }: StillOptions = {},
): Promise<number> {
  let last: number | undefined;
  let still = 0;
  return until(async () => {
    const now = await read();
    still = now === last ? still + 1 : 0;
    last = now;
    return final(now) || (ready(now) && still >= polls) ? now : undefined;
  }, what);
}
