// Module resolve hook: the conformance CLI's import of fs gets fsWithGlobSync.mjs; every other
// module gets node:fs as usual.
const SHIM = new URL('./fsWithGlobSync.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const fromConformance = context.parentURL?.includes('/@modelcontextprotocol/conformance/dist/') === true;
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs'))
    return { url: SHIM, shortCircuit: true };
  return nextResolve(specifier, context);
}
