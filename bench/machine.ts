// The machine and the versions a result was measured with, printed and stored with the numbers.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** Where and with what a run was measured. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly platform: string;
  readonly node: string;
  readonly loadAverage: readonly number[];
  readonly commit: string;
  readonly packages: Readonly<Record<string, string>>;
}

/** The version of a package as installed for the workspace folder `base` ('' = the root). */
function versionOf(base: string, name: string): string {
  try {
    const file = new URL(`../${base}node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'packages'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+uncommitted` : head;
  } catch {
    return 'unknown';
  }
}

/** Describes this machine, Node, and the package versions in play. */
export function describeMachine(): MachineInfo {
  const gateway = 'packages/gateway/';
  const toolpin = JSON.parse(
    readFileSync(new URL('../packages/gateway/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
    commit: gitCommit(),
    packages: {
      '@toolpin/gateway': toolpin.version,
      '@modelcontextprotocol/sdk': versionOf('', '@modelcontextprotocol/sdk'),
      autocannon: versionOf('', 'autocannon'),
      express: versionOf(gateway, 'express'),
      'http-proxy-middleware': versionOf('', 'http-proxy-middleware'),
      pino: versionOf(gateway, 'pino'),
    },
  };
}
