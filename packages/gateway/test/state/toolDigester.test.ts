import { MAX_CANONICAL_DEPTH } from '@toolpin/digest';
import { ToolDigester } from '../../src/state/toolDigester.js';

/** A tool whose inputSchema nests `depth` objects, built without recursion. */
function deepTool(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'object' };
  for (let level = 1; level < depth; level++) schema = { type: 'object', properties: { x: schema } };
  return { name: 'deep', inputSchema: schema };
}

describe('ToolDigester on definitions nested too deeply', () => {
  it.each([MAX_CANONICAL_DEPTH + 1, 50_000])(
    'observes a tool nested %i levels as a problem (unverifiable), never throwing',
    (depth) => {
      const observation = new ToolDigester().observe(deepTool(depth), 'trace.mcp-tool-definition.v1');
      expect(observation).toMatchObject({ name: 'deep', key: 'tool:deep' });
      expect(observation.digest).toBeUndefined();
      expect(observation.problem).toMatch(/nested/);
    },
  );

  it('digests a tool within the bound', () => {
    const observation = new ToolDigester().observe(deepTool(10), 'trace.mcp-tool-definition.v1');
    expect(observation.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
