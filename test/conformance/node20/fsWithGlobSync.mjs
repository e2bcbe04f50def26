// node:fs plus a globSync that throws: @modelcontextprotocol/conformance 0.1.16 imports
// fs.globSync (Node 22+) at load time for its tier-check command only, so on Node 20 the whole CLI
// fails to load ("does not provide an export named 'globSync'"). The client scenarios never call it.
export * from 'node:fs';
export { default } from 'node:fs';

export function globSync() {
  throw new Error('fs.globSync needs Node 22 (used by the conformance tier-check command only)');
}
