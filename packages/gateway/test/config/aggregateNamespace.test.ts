import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { GatewayError } from '../../src/errors.js';
import {
  loadGatewayConfig,
  namespacedName,
  planAggregate,
  resolveNamespaced,
  type AggregateConfig,
  type ServerConfig,
} from '../../src/config/index.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

/** Just enough of a server for the plan: its name and its route's auth. */
function server(name: string, auth?: 'resource-server'): ServerConfig {
  return { name, ...(auth === undefined ? {} : { auth: { mode: auth } }) } as unknown as ServerConfig;
}

const block = (extra: Partial<AggregateConfig> = {}): AggregateConfig => ({ separator: '__', ...extra });

describe('the aggregate namespace', () => {
  test('every server by default, each named by its own name, in order', () => {
    const plan = planAggregate(block(), [server('github'), server('files')]);
    expect(plan.problems).toEqual([]);
    expect(plan.namespace.members).toEqual([
      { server: 'github', prefix: 'github' },
      { server: 'files', prefix: 'files' },
    ]);
    const [github] = plan.namespace.members;
    expect(namespacedName(plan.namespace, github!, 'create_issue')).toBe('github__create_issue');
  });

  test('a name belongs to the one member whose prefix and separator begin it', () => {
    const { namespace } = planAggregate(block(), [server('a'), server('b')]);
    expect(resolveNamespaced(namespace, 'b__a__echo')).toEqual({
      member: { server: 'b', prefix: 'b' },
      name: 'a__echo',
    });
    expect(resolveNamespaced(namespace, 'a__echo')?.member.server).toBe('a');
    for (const name of ['a__', 'c__echo', 'A__echo', 'a_echo', '__echo', 'aecho'])
      expect(resolveNamespaced(namespace, name)).toBeUndefined();
  });

  test('prefixes whose names could be one name are refused, naming both; case does not tell them apart', () => {
    for (const [first, second] of [
      ['a', 'a_'], // a__ + _x = a___x = a___ + x
      ['a', 'a__b'], // a__ + b__x = a__b__x
      ['Files', 'files'],
      ['x', 'X_'],
    ] as const) {
      const plan = planAggregate(block(), [server(first), server(second)]);
      expect(plan.namespace.members.map((member) => member.server)).toEqual([first]);
      expect(plan.problems).toHaveLength(1);
      expect(plan.problems[0]?.note).toContain(`${first} ("${first}__…") and ${second}`);
    }
    // Another prefix, or another separator, sets them apart.
    expect(planAggregate(block({ prefixes: { a_: 'b' } }), [server('a'), server('a_')]).problems).toEqual([]);
    expect(planAggregate(block({ separator: '.' }), [server('a'), server('a_')]).problems).toEqual([]);
    expect(planAggregate(block({ separator: '-' }), [server('a'), server('a-b')]).problems).toHaveLength(1);
  });

  test('two members given one prefix are refused', () => {
    const plan = planAggregate(block({ prefixes: { a: 'gh', b: 'gh' } }), [server('a'), server('b')]);
    expect(plan.problems.map((problem) => problem.field)).toEqual(['aggregate.prefixes.b']);
  });

  test('servers the block names must exist, once each; a prefix must be a member’s', () => {
    const plan = planAggregate(block({ servers: ['a', 'nope', 'a'], prefixes: { zed: 'z' } }), [
      server('a'),
      server('zed'),
    ]);
    expect(plan.problems.map((problem) => problem.field)).toEqual([
      'aggregate.servers[1]',
      'aggregate.servers[2]',
      'aggregate.prefixes.zed',
    ]);
    expect(plan.namespace.members.map((member) => member.server)).toEqual(['a']);
  });

  test('a route that verifies tokens is never a member: left out by default, refused when named', () => {
    const servers = [server('open'), server('guarded', 'resource-server')];
    const byDefault = planAggregate(block(), servers);
    expect(byDefault.problems).toEqual([]);
    expect(byDefault.skipped).toEqual(['guarded']);
    expect(byDefault.namespace.members.map((member) => member.server)).toEqual(['open']);
    const named = planAggregate(block({ servers: ['open', 'guarded'] }), servers);
    expect(named.problems[0]).toMatchObject({ field: 'aggregate.servers[1]' });
  });
});

describe('the aggregate block of the gateway file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    await mkdir(join(dir, 'servers'), { recursive: true });
  });
  afterEach(() => cleanup());

  test('is read with its defaults, and absent when not written', async () => {
    await writeIn(join(dir, 'servers'), 'demo.yaml', stringify(validPin()));
    const file = await writeIn(dir, 'gateway.yaml', stringify({ servers: './servers', aggregate: {} }));
    expect((await loadGatewayConfig(file)).aggregate).toEqual({ separator: '__' });
    const without = await writeIn(dir, 'plain.yaml', stringify({ servers: './servers' }));
    expect((await loadGatewayConfig(without)).aggregate).toBeUndefined();
  });

  test('refuses, at start, prefixes that could make two members’ names one', async () => {
    await writeIn(join(dir, 'servers'), 'a.yaml', stringify({ ...validPin(), name: 'a' }));
    await writeIn(join(dir, 'servers'), 'a_.yaml', stringify({ ...validPin(), name: 'a_' }));
    const file = await writeIn(dir, 'gateway.yaml', stringify({ servers: './servers', aggregate: {} }));
    const error = await loadGatewayConfig(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('GW_CONFIG_INVALID');
    expect((error as GatewayError).message).toContain(
      'aggregate.servers: expected prefixes that tell the members apart',
    );
    expect((error as GatewayError).message).toContain('a ("a__…") and a_ ("a___…")');
  });

  test('refuses a separator that is not made of tool-name characters', async () => {
    const file = await writeIn(
      dir,
      'gateway.yaml',
      stringify({ servers: './servers', aggregate: { separator: '/' } }),
    );
    await expect(loadGatewayConfig(file)).rejects.toThrow(/aggregate\.separator/);
  });
});
