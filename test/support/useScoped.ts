/** Something a test starts and closes: a chain, a rig, a gateway, an SDK client. */
export interface Closable {
  close(): Promise<void>;
}

/** Options of {@link useScoped}. */
export interface ScopeOptions<T> {
  /** Start before each test and close after it, instead of once for the describe. */
  readonly perTest?: boolean;
  /** Runs after each start (e.g. a first listing). */
  readonly ready?: (started: T) => Promise<unknown>;
}

/**
 * A describe's setup in one call: registers the jest hooks that start it (once, or before each
 * test with `perTest`) and close it, and returns a view whose members are those of the one in
 * force (read outside the describe's tests, a member throws). Call it in the describe's body.
 */
export function useScoped<T extends Closable>(start: () => Promise<T>, options: ScopeOptions<T> = {}): T {
  let current: T | undefined;
  const open = async (): Promise<void> => {
    current = await start();
    await options.ready?.(current);
  };
  const close = async (): Promise<void> => {
    await current?.close();
    current = undefined;
  };
  if (options.perTest === true) {
    beforeEach(open);
    afterEach(close);
  } else {
    beforeAll(open);
    afterAll(close);
  }
  return new Proxy({} as T, {
    get(_target, key) {
      if (current === undefined)
        throw new Error(`${String(key)} is read outside the describe that starts it`);
      const value: unknown = Reflect.get(current, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(current) : value;
    },
  });
}
