import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { posix, resolve, win32 } from 'node:path';
import { CliInputError } from './cliInputError.js';

/** The desktop clients `toolpin protect --all` (or `protect <client>`) finds the config of. */
export const CLIENT_NAMES = ['claude', 'cursor', 'vscode'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

/** What to look at: the platform, its environment and the home folder. */
export interface ClientSearch {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
}

const LABELS: Readonly<Record<ClientName, string>> = {
  claude: 'Claude Desktop',
  cursor: 'Cursor',
  vscode: 'VS Code',
};

/** A client's name as people say it. */
export function clientLabel(client: ClientName): string {
  return LABELS[client];
}

/** The folder of per-user application settings: %APPDATA%, ~/Library/Application Support, $XDG_CONFIG_HOME. */
function appData(search: ClientSearch): string {
  const { platform, env, home } = search;
  if (platform === 'win32') return env.APPDATA ?? win32.join(home, 'AppData', 'Roaming');
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support');
  return env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
    ? env.XDG_CONFIG_HOME
    : posix.join(home, '.config');
}

/**
 * Where each client keeps its user-wide MCP config, most usual first (each client's documented
 * place; docs/desktop.md): Claude Desktop's `claude_desktop_config.json` in its application
 * folder (on Windows also the Store install's packaged folder; Linux builds use ~/.config/Claude),
 * Cursor's `~/.cursor/mcp.json`, VS Code's user `mcp.json` (Code, then Code - Insiders).
 */
export function clientConfigPaths(client: ClientName, search: ClientSearch): string[] {
  const path = search.platform === 'win32' ? win32 : posix;
  const data = appData(search);
  switch (client) {
    case 'claude': {
      const paths = [path.join(data, 'Claude', 'claude_desktop_config.json')];
      const local = search.env.LOCALAPPDATA;
      if (search.platform === 'win32' && local !== undefined)
        paths.push(
          path.join(
            local,
            'Packages',
            'Claude_pzs8sxrjxfjjc',
            'LocalCache',
            'Roaming',
            'Claude',
            'claude_desktop_config.json',
          ),
        );
      return paths;
    }
    case 'cursor':
      return [
        path.join(
          search.platform === 'win32' ? (search.env.USERPROFILE ?? search.home) : search.home,
          '.cursor',
          'mcp.json',
        ),
      ];
    case 'vscode':
      return [
        path.join(data, 'Code', 'User', 'mcp.json'),
        path.join(data, 'Code - Insiders', 'User', 'mcp.json'),
      ];
  }
}

/**
 * The person's home folder: `$HOME` where it is set on a POSIX system (what `os.homedir()` reads
 * there too, but read through `process.env`, so a command run in-process sees the HOME it was
 * given), else the system's.
 */
export function homeFolder(): string {
  const home = process.env.HOME;
  return process.platform !== 'win32' && home !== undefined && home !== '' ? home : homedir();
}

/** This machine, as {@link clientConfigPaths} looks at it. */
export function thisMachine(): ClientSearch {
  return { platform: process.platform, env: process.env, home: homeFolder() };
}

/** A client config found on this machine. */
export interface FoundConfig {
  readonly client: ClientName;
  readonly file: string;
}

/** The configs of `clients` that exist on this machine, in the order of {@link CLIENT_NAMES}. */
export function findClientConfigs(
  clients: readonly ClientName[],
  search = thisMachine(),
): {
  found: FoundConfig[];
  missing: { client: ClientName; paths: string[] }[];
} {
  const found: FoundConfig[] = [];
  const missing: { client: ClientName; paths: string[] }[] = [];
  for (const client of clients) {
    const paths = clientConfigPaths(client, search);
    const existing = paths.filter((file) => existsSync(file));
    if (existing.length === 0) missing.push({ client, paths });
    for (const file of existing) found.push({ client, file });
  }
  return { found, missing };
}

/**
 * The config's own path: a symlink (a dotfiles manager's) is followed, so the rewrite and the
 * backup land beside the real file and the link stays a link.
 */
export async function configPathOf(file: string): Promise<string> {
  const absolute = resolve(file);
  return realpath(absolute).catch(() => absolute);
}

/** The configs a protect names: a path, a client's name (its usual path), or every client's (`--all`). */
export function configsOf(
  options: { config?: string; all?: boolean },
  command: string,
): { label?: string; file: string }[] {
  if (options.all === true) {
    if (options.config !== undefined)
      throw new CliInputError(`--all finds every client's config: leave out ${options.config}`);
    const { found } = findClientConfigs(CLIENT_NAMES);
    if (found.length === 0)
      throw new CliInputError(
        `no client config found at the usual paths (${describeMissing(CLIENT_NAMES)}); name one: toolpin ${command} <client-config>`,
      );
    return found.map(({ client, file }) => ({ label: clientLabel(client), file }));
  }
  if (options.config === undefined)
    throw new CliInputError(`name a client config, a client (${CLIENT_NAMES.join(', ')}) or --all`);
  const client = CLIENT_NAMES.find((name) => name === options.config);
  if (client === undefined || existsSync(options.config)) return [{ file: options.config }];
  const { found } = findClientConfigs([client]);
  if (found.length === 0)
    throw new CliInputError(`no ${clientLabel(client)} config at ${describeMissing([client])}`);
  return found.map(({ file }) => ({ label: clientLabel(client), file }));
}

function describeMissing(clients: readonly ClientName[]): string {
  return findClientConfigs(clients)
    .missing.flatMap((missing) => missing.paths)
    .join(', ');
}
