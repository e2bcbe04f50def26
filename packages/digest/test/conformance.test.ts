import { AGENTAVOW_PROFILE, TRACE_PROFILE, digestCatalog, digestTool, encodeToolKey } from '../src/index.js';
import { catalogTools, published } from './fixtures.js';

const catalogs = Object.entries(published.catalogs);
const perTool = catalogs.flatMap(([catalog, { file, tools }]) =>
  Object.entries(tools).map(([key, digest]) => ({ catalog, file, key, digest })),
);
const agentAvow: Record<string, string> = {
  deepwiki: 'sha256:9d4a7d42e2b6c025099570b6dfff977f9e58ea3fce98f727c58454e936025e84',
  'deepwiki-drifted': 'sha256:6049cb261461618634c2a4fa6a197239273819b165e88b8ecd567a834d82d7e8',
  'cloudflare-docs': 'sha256:211d64b4964c1fa9bba7d4d21b7d0f486c7e61f40f2fb720670045192edc9da5',
};

describe('published trace.mcp-tool-definition.v1 values (digests.json)', () => {
  it('uses the label digests.json was computed under', () => {
    expect(published.label).toBe(TRACE_PROFILE);
    expect(catalogs).toHaveLength(3);
    expect(perTool).toHaveLength(8);
    expect(published.key_encoding).toHaveLength(13);
  });

  it.each(catalogs)(
    'reproduces the %s catalog digest and its per-tool map',
    (_name, { file, tools, manifest }) => {
      const result = digestCatalog(catalogTools(file));
      expect(result.catalog).toBe(manifest);
      expect(result.entries).toEqual(tools);
    },
  );

  it.each(perTool)('reproduces $catalog $key as $digest', ({ file, key, digest }) => {
    const tool = catalogTools(file).find((candidate) => encodeToolKey(candidate.name) === key);
    expect(tool).toBeDefined();
    expect(digestTool(tool)).toBe(digest);
  });

  it.each(published.key_encoding)('encodes the name $name as $key', ({ name, key }) => {
    expect(encodeToolKey(name)).toBe(key);
  });

  it.each(catalogs)('reproduces the AgentAvow catalog digest of %s', (name, { file }) => {
    expect(digestCatalog(catalogTools(file), { profile: AGENTAVOW_PROFILE }).catalog).toBe(agentAvow[name]);
  });
});
