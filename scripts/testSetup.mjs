// Set up once per jest worker thread, before its first test file (jest-light-runner runs the test
// files in plain Node.js worker threads: see jest.config.js and docs/architecture.md "The suite").
//
// 1. TypeScript: tsx's loader strips the types of the test files and what they import from
//    packages/*/src (nothing is type-checked here: `tsc -b` checks the packages before jest runs,
//    `pnpm typecheck:tests` the tests). Registered in the worker only, so the processes the tests
//    spawn (toolpin, stdio fixtures) run plain Node.js as users do; asked about TypeScript only
//    (scripts/tsHooks.mjs), so packages/*/dist and node_modules load as Node.js loads them.
// 2. JIT: V8's optimizing compiler (TurboFan) is off in the test threads (`--max-opt=1`: the
//    interpreter and Sparkplug only). A test file runs most of its code a few times, so TurboFan's
//    compiles were mostly wasted: V8's helper threads took about a quarter of the jest process's
//    CPU, two thirds of it compiling (perf, Dec 2026). V8 flags are process-wide, so this holds
//    for both threads and jest's own, never for the processes the tests spawn (toolpin, fixtures:
//    they run as users run them). TOOLPIN_TEST_TURBOFAN=1 leaves TurboFan on (to compare).
// 3. Bounds: jest-light-runner does not apply jest's timeouts, so every test and hook is bounded
//    here: TEST_TIMEOUT_MS unless the test gives its own (`it(name, fn, ms)`). A test past its
//    bound fails with jest's message and the file goes on, as under jest's own runner.
import { register } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { MessageChannel } from 'node:worker_threads';

// What tsx's register() (tsx/esm/api) does on Node.js 20, with its hooks behind tsHooks.mjs: the
// port tsx's hooks talk on, and source maps on (stack traces point into the .ts files).
const { port1, port2 } = new MessageChannel();
port1.unref();
register('./tsHooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
process.setSourceMapsEnabled(true);
if (process.env.TOOLPIN_TEST_TURBOFAN === undefined) setFlagsFromString('--max-opt=1');

/** A bound, not a timing assertion (jest.config.js's `testTimeout` says the same for jest). */
export const TEST_TIMEOUT_MS = 20_000;

/** `fn` raced against its bound, keeping its arity (jest passes a done callback to fn(done)). */
function bounded(fn, ms) {
  if (typeof fn !== 'function') return fn;
  const limit = typeof ms === 'number' && ms > 0 ? ms : TEST_TIMEOUT_MS;
  const run = function (...args) {
    let timer;
    const expired = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Exceeded timeout of ${limit} ms for a test or hook.`)),
        limit,
      );
    });
    const work = new Promise((resolve, reject) => {
      if (fn.length > args.length) {
        fn.call(this, ...args, (error) => (error ? reject(error) : resolve()));
      } else {
        Promise.resolve()
          .then(() => fn.apply(this, args))
          .then(resolve, reject);
      }
    });
    return Promise.race([work, expired]).finally(() => clearTimeout(timer));
  };
  return run;
}

/** A jest global whose callbacks are bounded; `.each`, `.only`, `.skip` keep their meaning. */
function boundedGlobal(original) {
  const wrapped = (name, fn, ms) => original(name, bounded(fn, ms), ms);
  for (const key of ['only', 'skip', 'todo', 'concurrent']) {
    if (original[key] !== undefined) wrapped[key] = original[key];
  }
  // jest-light-runner runs a `failing` test as a plain one: it passes here when it fails (a known
  // finding still holds) and fails once it passes (the finding is fixed: make it a plain `it`).
  wrapped.failing = (name, fn, ms) => original(name, failing(fn, ms), ms);
  wrapped.failing.each = (...table) => {
    const bind = original.each(...table);
    return (name, fn, ms) => bind(name, failing(fn, ms), ms);
  };
  for (const key of ['only', 'skip']) {
    if (typeof original[key] === 'function') {
      const inner = original[key];
      wrapped[key] = (name, fn, ms) => inner(name, bounded(fn, ms), ms);
      if (inner.each) wrapped[key].each = eachOf(inner.each);
    }
  }
  if (original.each) wrapped.each = eachOf(original.each);
  return wrapped;
}

/** `fn` bounded and inverted, as jest's `it.failing`: its failure passes, its success fails. */
function failing(fn, ms) {
  const run = bounded(fn, ms);
  return function (...args) {
    return Promise.resolve()
      .then(() => run.apply(this, args))
      .then(
        () => {
          throw new Error('Failing test passed even though it was supposed to fail. Remove `.failing`.');
        },
        () => undefined,
      );
  };
}

function eachOf(each) {
  return (...table) => {
    const bind = each(...table);
    return (name, fn, ms) => bind(name, bounded(fn, ms), ms);
  };
}

function boundedHook(original) {
  return (fn, ms) => original(bounded(fn, ms), ms);
}

globalThis.it = boundedGlobal(globalThis.it);
globalThis.test = boundedGlobal(globalThis.test);
for (const hook of ['beforeAll', 'afterAll', 'beforeEach', 'afterEach']) {
  globalThis[hook] = boundedHook(globalThis[hook]);
}
