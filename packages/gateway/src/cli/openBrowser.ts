import { spawn } from 'node:child_process';

/**
 * Opens `url` in the person's browser: the program `$BROWSER` names when set (as xdg-open and most
 * tools honour it), else the desktop's launcher (`open`, `start`, `xdg-open`). Says nothing when
 * none runs: the commands that call it print the URL anyway.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): void {
  const chosen = env.BROWSER?.trim();
  const [command, ...args] =
    chosen !== undefined && chosen !== ''
      ? [chosen, url]
      : process.platform === 'darwin'
        ? ['open', url]
        : process.platform === 'win32'
          ? ['cmd', '/c', 'start', '""', url]
          : ['xdg-open', url];
  try {
    const child = spawn(command as string, args, { stdio: 'ignore', detached: true });
    child.once('error', () => undefined);
    child.unref();
  } catch {
    // No launcher: the printed URL is the way.
  }
}

/**
 * Whether {@link openBrowser} can show a page here: `$BROWSER` set, or macOS or Windows, or a
 * graphical session (DISPLAY or WAYLAND_DISPLAY) elsewhere.
 */
export function canOpenBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if ((env.BROWSER?.trim() ?? '') !== '') return true;
  if (platform === 'darwin' || platform === 'win32') return true;
  return (env.DISPLAY ?? '') !== '' || (env.WAYLAND_DISPLAY ?? '') !== '';
}
