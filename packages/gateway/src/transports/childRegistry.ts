import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

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

/** How often {@link waitForGroupExit} looks again. */
const GROUP_POLL_MS = 10;
/** How long a group may stay reachable before its members are looked up in /proc (zombies). */
const ZOMBIE_CHECK_AFTER_MS = 50;

// A zombie (exited, its parent not yet waiting on it) holds no resources and cannot run again, but
// signal 0 still reaches it; where nobody reaps orphans (node as PID 1 in a container) it never
// goes. So a group that signal 0 still reaches is looked up in /proc: it is gone once every
// member left is a zombie. Without /proc (macOS), signal 0 alone decides.
async function hasRunningMember(pgid: number): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/** True while the group has a member signal 0 reaches; `members` also asks /proc which are zombies. */
async function groupRuns(pgid: number, members: boolean): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // ESRCH: no process left in the group; EPERM: one runs that we may not signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return members ? hasRunningMember(pgid) : true;
}

/**
 * Resolves once no process of the child's group runs any more (POSIX; at once on Windows, where
 * there are no groups), polling every 10 ms for at most `timeoutMs`, with whether the group is
 * gone: a signalled group is not yet a dead one, and shutdown waits for the dead one. A killed
 * process is usually reaped within milliseconds, so /proc is read only once the group has been
 * reachable for {@link ZOMBIE_CHECK_AFTER_MS}.
 */
export async function waitForGroupExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const pid = child.pid;
  if (pid === undefined || process.platform === 'win32') return true;
  const started = Date.now();
  for (;;) {
    const elapsed = Date.now() - started;
    if (!(await groupRuns(pid, elapsed >= ZOMBIE_CHECK_AFTER_MS))) return true;
    if (elapsed >= timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
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

/**
 * Stops every child still running, each with its whole group: SIGTERM, then SIGKILL for a group
 * still running after `graceMs`. What a command interrupted by Ctrl-C runs before it exits: its
 * children live in their own process groups, so the terminal's signal never reached them.
 */
export async function stopAllChildren(graceMs: number): Promise<void> {
  const children = [...live];
  for (const child of children) killProcessGroup(child, 'SIGTERM');
  await Promise.all(
    children.map(async (child) => {
      if (!(await waitForGroupExit(child, graceMs))) killProcessGroup(child, 'SIGKILL');
    }),
  );
}

/** How many spawned children are still running. */
export function liveChildCount(): number {
  return live.size;
}
