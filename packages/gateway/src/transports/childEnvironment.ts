import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The environment a stdio child gets: the SDK's defaults (PATH, HOME and the like), or this
 * process's whole environment when inherited (`wrap`), plus the variables of this process named in
 * the pin's `passEnv` (those it has), plus the pin's `env`. The artifact of the command is resolved
 * in the same one (npm reads its registry and cache from it).
 */
export function childEnvironment(
  env: Readonly<Record<string, string>> | undefined,
  inheritEnv: boolean | undefined,
  passEnv: readonly string[] = [],
): Record<string, string> {
  const base = inheritEnv === true ? definedEnv(process.env) : getDefaultEnvironment();
  return { ...base, ...passedEnv(passEnv), ...env };
}

/** The variables of this process's environment named in a pin's `passEnv` (those it has). */
function passedEnv(names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}
