import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { CliInputError } from './cliInputError.js';
import { homeFolder } from './clientConfigFiles.js';
import type { CliIo } from './cliIo.js';
import type { ManagedGateway } from './managedGateway.js';

/** The user service managers `toolpin up --service` writes a file for. */
export type ServiceManager = 'systemd' | 'launchd';

/** The label of the launchd agent and the name of the systemd user unit. */
const SERVICE_LABEL = 'dev.toolpin.gateway';
const SERVICE_UNIT = 'toolpin-gateway.service';

/** This platform's user service manager: systemd on Linux, launchd on macOS. */
export function serviceManagerOf(
  given: string | undefined,
  platform: NodeJS.Platform = process.platform,
): ServiceManager {
  if (given === 'systemd' || given === 'launchd') return given;
  if (given !== undefined) throw new CliInputError(`--service-manager ${given}: expected systemd or launchd`);
  if (platform === 'darwin') return 'launchd';
  if (platform === 'linux') return 'systemd';
  throw new CliInputError(
    `no user service manager toolpin writes for on ${platform}: run toolpin up at logon (Task Scheduler), or pass --service-manager systemd|launchd to see the files`,
  );
}

/** The command the service runs: this node, this toolpin, serving the managed gateway in the foreground. */
export function gatewayArgv(gateway: ManagedGateway, script: string): string[] {
  return [process.execPath, script, 'serve', '--config', gateway.file, '--log-format', 'json'];
}

// systemd's own quoting: double quotes, backslash escapes, `%` specifiers and `$` variables doubled.
function systemdWord(word: string): string {
  const escaped = word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return `"${escaped}"`;
}

const xml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The systemd user unit that runs the managed gateway. */
function systemdUnit(gateway: ManagedGateway, argv: readonly string[]): string {
  const log = gateway.logFile.replace(/%/g, '%%');
  return [
    '[Unit]',
    `Description=toolpin gateway for the HTTP servers toolpin protect routes (${gateway.pins.replace(/%/g, '%%')})`,
    '',
    '[Service]',
    `ExecStart=${argv.map(systemdWord).join(' ')}`,
    'Restart=on-failure',
    `StandardOutput=append:${log}`,
    `StandardError=append:${log}`,
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** The launchd agent (a property list) that runs the managed gateway. */
function launchdPlist(gateway: ManagedGateway, argv: readonly string[]): string {
  const strings = argv.map((word) => `    <string>${xml(word)}</string>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key><string>${SERVICE_LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...strings,
    '  </array>',
    `  <key>WorkingDirectory</key><string>${xml(gateway.dir)}</string>`,
    '  <key>RunAtLoad</key><true/>',
    '  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>',
    `  <key>StandardOutPath</key><string>${xml(gateway.logFile)}</string>`,
    `  <key>StandardErrorPath</key><string>${xml(gateway.logFile)}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/** Where the service file goes, and what the person runs to start it. */
function serviceFile(manager: ServiceManager, env: NodeJS.ProcessEnv): { file: string; start: string[] } {
  if (manager === 'launchd') {
    const file = join(homeFolder(), 'Library', 'LaunchAgents', `${SERVICE_LABEL}.plist`);
    return { file, start: [`launchctl bootstrap gui/$(id -u) '${file}'`] };
  }
  const config =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : join(homeFolder(), '.config');
  return {
    file: join(config, 'systemd', 'user', SERVICE_UNIT),
    start: ['systemctl --user daemon-reload', `systemctl --user enable --now ${SERVICE_UNIT}`],
  };
}

/**
 * `toolpin up --service print|install`: the user service file that keeps the managed gateway
 * running (a systemd user unit, a launchd agent), printed on stdout, or written to its usual place
 * with the commands that start it printed (toolpin does not run them).
 */
export async function writeService(
  action: string,
  manager: ServiceManager,
  gateway: ManagedGateway,
  script: string,
  io: CliIo,
): Promise<void> {
  if (action !== 'print' && action !== 'install')
    throw new CliInputError(`--service ${action}: expected print or install`);
  const argv = gatewayArgv(gateway, script);
  const text = manager === 'launchd' ? launchdPlist(gateway, argv) : systemdUnit(gateway, argv);
  if (action === 'print') {
    io.stdout.write(text);
    return;
  }
  const { file, start } = serviceFile(manager, process.env);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, text);
  io.stderr.write(
    `${file}: written; stop a gateway started by toolpin up first (toolpin down), then start the service:\n`,
  );
  for (const line of start) io.stderr.write(`  ${line}\n`);
}
