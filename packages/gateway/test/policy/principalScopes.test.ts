import { createHash } from 'node:crypto';
import type { PrincipalConfig, ServerScopeConfig } from '../../src/config/index.js';
import { PrincipalScopes } from '../../src/policy/principalScopes.js';
import { keyForPrincipal, principalOfKey } from '../../src/policy/sessionPrincipal.js';

const sha = (key: string): string => createHash('sha256').update(key).digest('hex');
const every = (items: ServerScopeConfig['tools']): ServerScopeConfig => ({
  tools: items,
  prompts: items,
  resourceTemplates: items,
});

const PRINCIPALS: PrincipalConfig[] = [
  { name: 'alice', apiKeySha256: sha('a-key'), servers: { github: every(['create_*', 'list_issues']) } },
  {
    name: 'ci',
    oauth: { issuer: 'https://id.example', clientId: 'ci-app', scopes: ['mcp:ci'] },
    servers: { 'files*': every('*'), github: { tools: ['get_*'], prompts: [], resourceTemplates: '*' } },
  },
  { name: 'me', local: 'dana', servers: { '*': every('*') } },
];

describe('principal scopes', () => {
  const scopes = new PrincipalScopes(PRINCIPALS);
  const token = { issuer: 'https://id.example', subject: 'bot', clientId: 'ci-app', scopes: ['mcp:ci', 'x'] };

  test('resolves a principal by API key, by token claims, by the local user; none by anything else', () => {
    expect(scopes.resolve({ apiKey: 'a-key' })).toBe('alice');
    expect(scopes.resolve({ apiKey: 'a-key ' })).toBeUndefined();
    expect(scopes.resolve({ apiKey: 'A-KEY' })).toBeUndefined();
    expect(scopes.resolve({ token })).toBe('ci');
    expect(scopes.resolve({ token: { ...token, clientId: 'other' } })).toBeUndefined();
    expect(scopes.resolve({ token: { ...token, scopes: ['x'] } })).toBeUndefined();
    expect(scopes.resolve({ token: { ...token, issuer: 'https://evil.example' } })).toBeUndefined();
    expect(scopes.resolve({ localUser: 'dana' })).toBe('me');
    expect(scopes.resolve({ localUser: 'eve' })).toBeUndefined();
    expect(scopes.resolve({})).toBeUndefined();
  });

  test('matches item names and globs exactly: case, look-alikes and separators count', () => {
    const test = scopes.itemTest('alice', 'github', 'tools')!;
    expect(['create_issue', 'create_pr', 'list_issues'].every(test)).toBe(true);
    for (const name of [
      'Create_issue',
      'list_issues ',
      'сreate_issue',
      'delete_repo',
      'create_a/b',
      './list_issues',
    ])
      expect(test(name)).toBe(false);
  });

  test('a server no entry names, a principal the block does not name, or none at all: nothing', () => {
    expect(scopes.itemTest('alice', 'files', 'tools')!('read')).toBe(false);
    expect(scopes.itemTest('mallory', 'github', 'tools')!('create_issue')).toBe(false);
    expect(scopes.itemTest(undefined, 'github', 'tools')!('create_issue')).toBe(false);
  });

  test("'*' is every item (no test at all); server globs; a surface left out is none", () => {
    expect(scopes.itemTest('ci', 'files-eu', 'tools')).toBeUndefined();
    expect(scopes.itemTest('me', 'anything', 'prompts')).toBeUndefined();
    expect(scopes.itemTest('ci', 'github', 'resourceTemplates')).toBeUndefined();
    expect(scopes.itemTest('ci', 'github', 'prompts')!('triage')).toBe(false);
    expect(scopes.itemTest('ci', 'github', 'tools')!('get_issue')).toBe(true);
  });

  test('a session key carries its principal at its start, and only there', () => {
    const key = keyForPrincipal('alice', 'session:abc:hash');
    expect(principalOfKey(key)).toBe('alice');
    expect(keyForPrincipal(undefined, 'session:abc:hash')).toBe('session:abc:hash');
    expect(principalOfKey('session:as:bob\nx')).toBeUndefined();
    expect(principalOfKey('credential:hash')).toBeUndefined();
  });
});
