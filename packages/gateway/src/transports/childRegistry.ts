import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let hooked = false;

/** Signals a child's whole process group (POSIX), or the child alone (Windows); a group already gone is fine. */
export function killProcessGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (process.platform === 'win32') child.kill(signal);
    else process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left in the group.
  }
}

// Last line of defence: when the gateway process exits (even on an uncaught exception), every child
// it spawned is killed with its group. Children live in their own process groups, so a terminal's
// Ctrl-C would not reach them on its own.
function killAllOnExit(): void {
  for (const child of live) killProcessGroup(child, 'SIGKILL');
  live.clear();
}

/** Remembers a running child so it is killed if the gateway process exits first. */
export function trackChild(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.once('exit', killAllOnExit);
  }
  live.add(child);
}

/** Forgets a child that has exited. */
export function untrackChild(child: ChildProcess): void {
  live.delete(child);
}

/** How many spawned children are still running. */
export function liveChildCount(): number {
  return live.size;
}
