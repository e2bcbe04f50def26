import type { AggregateConfig, ServerConfig } from './types.js';

/** One member server of the aggregate and the prefix of its items' names there. */
export interface AggregateMember {
  readonly server: string;
  readonly prefix: string;
}

/** The members of the aggregate and how their items are named: `<prefix><separator><name>`. */
export interface AggregateNamespace {
  readonly members: readonly AggregateMember[];
  readonly separator: string;
}

/** Something in the `aggregate` block that cannot be served as written. */
export interface AggregateProblem {
  /** The field of the gateway file (`aggregate.servers`, `aggregate.prefixes.<name>`). */
  readonly field: string;
  readonly expected: string;
  readonly note: string;
}

/** A plan and what it had to leave out (empty when the block is served as written). */
export interface AggregatePlan {
  readonly namespace: AggregateNamespace;
  readonly problems: readonly AggregateProblem[];
  /** Servers left out because their route verifies tokens (resource-server), when no list names them. */
  readonly skipped: readonly string[];
}

/** True when a server's route verifies OAuth tokens: the aggregate (which verifies none) never carries it. */
function verifiesTokens(server: ServerConfig): boolean {
  return server.auth?.mode === 'resource-server';
}

/**
 * Two members whose names could be one name: one's `<prefix><separator>` begins the other's,
 * compared without case (so `Files__read` and `files__read`, which a model may take for one
 * another, are refused too). When no pair overlaps, a name begins with at most one member's
 * `<prefix><separator>`, so every namespaced name belongs to exactly one member, whatever the
 * members list: no member can list an item that reads as another member's.
 */
function overlaps(a: AggregateMember, b: AggregateMember, separator: string): boolean {
  const left = `${a.prefix}${separator}`.toLowerCase();
  const right = `${b.prefix}${separator}`.toLowerCase();
  return left.startsWith(right) || right.startsWith(left);
}

/** The members the block names (or every server), each with its prefix; problems for what it names wrong. */
function candidates(
  block: AggregateConfig,
  servers: readonly ServerConfig[],
  problems: AggregateProblem[],
  skipped: string[],
): AggregateMember[] {
  const byName = new Map(servers.map((server) => [server.name, server]));
  const names = block.servers ?? servers.map((server) => server.name);
  const out: AggregateMember[] = [];
  names.forEach((name, index) => {
    const server = byName.get(name);
    const field = `aggregate.servers[${index}]`;
    if (server === undefined)
      return void problems.push({
        field,
        expected: 'the name of a server of the servers folder',
        note: `(no pin file names ${JSON.stringify(name)})`,
      });
    if (out.some((member) => member.server === name))
      return void problems.push({ field, expected: 'each server once', note: `(${name} is listed twice)` });
    if (verifiesTokens(server)) {
      if (block.servers === undefined) return void skipped.push(name);
      return void problems.push({
        field,
        expected: 'a server whose route does not verify OAuth tokens (auth.mode: resource-server)',
        note: `(${name}'s tokens would not be verified on /mcp)`,
      });
    }
    out.push({ server: name, prefix: block.prefixes?.[name] ?? name });
  });
  for (const name of Object.keys(block.prefixes ?? {}))
    if (!out.some((member) => member.server === name) && !skipped.includes(name))
      problems.push({
        field: `aggregate.prefixes.${name}`,
        expected: 'the prefix of a member server',
        note: `(${name} is not a member of the aggregate)`,
      });
  return out;
}

/**
 * Plans the aggregate of `servers` by its block: the members in order, each with its prefix. A
 * member whose prefix overlaps an earlier member's (see {@link overlaps}) is left out with a
 * problem naming both, as is a server the block names that does not exist or verifies tokens; at
 * start every problem refuses the gateway file (loadGatewayConfig), on a reload the members left
 * out are logged and the others served.
 */
export function planAggregate(block: AggregateConfig, servers: readonly ServerConfig[]): AggregatePlan {
  const problems: AggregateProblem[] = [];
  const skipped: string[] = [];
  const members: AggregateMember[] = [];
  const { separator } = block;
  for (const member of candidates(block, servers, problems, skipped)) {
    const clash = members.find((kept) => overlaps(kept, member, separator));
    if (clash === undefined) {
      members.push(member);
      continue;
    }
    problems.push({
      field:
        block.prefixes?.[member.server] === undefined
          ? 'aggregate.servers'
          : `aggregate.prefixes.${member.server}`,
      expected: 'prefixes that tell the members apart',
      note:
        `(the names of ${clash.server} ("${clash.prefix}${separator}…") and ${member.server} ` +
        `("${member.prefix}${separator}…") could be one name: give one of them another prefix in aggregate.prefixes)`,
    });
  }
  return { namespace: { members, separator }, problems, skipped };
}

/** The name an item of `member` has in the aggregate. */
export function namespacedName(namespace: AggregateNamespace, member: AggregateMember, name: string): string {
  return `${member.prefix}${namespace.separator}${name}`;
}

/** The member an aggregate name belongs to and the item's own name there; undefined when it names no member. */
export function resolveNamespaced(
  namespace: AggregateNamespace,
  name: string,
): { readonly member: AggregateMember; readonly name: string } | undefined {
  for (const member of namespace.members) {
    const head = `${member.prefix}${namespace.separator}`;
    if (name.length > head.length && name.startsWith(head)) return { member, name: name.slice(head.length) };
  }
  return undefined;
}
