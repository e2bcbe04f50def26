// Module hooks of the test threads (registered by scripts/testSetup.mjs): tsx's own hooks, asked
// only about TypeScript. A module a TypeScript file imports is resolved by tsx (a `./x.js` that
// is `./x.ts` in packages/*/src), a TypeScript file is loaded (types stripped) by tsx; every
// other module (packages/*/dist, node_modules, .mjs fixtures) is resolved and loaded by Node.js
// as a user's process loads it, without tsx reading and scanning it first (tsx's hooks thread
// took several seconds of CPU a run doing so, docs/architecture.md "The suite").
import { initialize, load as tsxLoad, resolve as tsxResolve } from 'tsx/esm';

export { initialize };

const TYPESCRIPT = /\.(?:[cm]?ts|tsx)(?:[?#].*)?$/;

export function resolve(specifier, context, nextResolve) {
  const { parentURL } = context;
  if (parentURL === undefined || TYPESCRIPT.test(parentURL) || TYPESCRIPT.test(specifier))
    return tsxResolve(specifier, context, nextResolve);
  return nextResolve(specifier, context);
}

export function load(url, context, nextLoad) {
  return TYPESCRIPT.test(url) ? tsxLoad(url, context, nextLoad) : nextLoad(url, context);
}
