// The server's last resort (R7.6): when a supervisor or the pool's zygote stops answering (stopped,
// wedged), the server kills the process tree below it itself, by pid, from /proc. The helper's
// own supervision is the normal path; this is for when that path is gone.
import { readdirSync } from 'node:fs';
import { isLive, procStat } from './proc-stat.js';

/** Every live process's parent, from /proc (zombies and processes that vanish are skipped). */
function parents(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = procStat(pid);
    if (stat !== undefined && isLive(stat)) byPid.set(pid, stat.ppid);
  }
  return byPid;
}

/** The live descendants of root (root excluded). */
export function descendantsOf(root: number): number[] {
  const byPid = parents();
  const below = new Set<number>([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of byPid) {
      if (!below.has(pid) && below.has(ppid)) {
        below.add(pid);
        grew = true;
      }
    }
  }
  below.delete(root);
  return [...below];
}

const kill = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
};

/** The parent of pid, or undefined when it is gone (or a zombie). */
export function parentOf(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat !== undefined && isLive(stat) ? stat.ppid : undefined;
}

/**
 * SIGKILL to everything below root, then to root. Root stays alive (a subreaper, stopped or not)
 * until its tree is gone, so orphans re-parent to it and the next scan still finds them; rounds
 * catch processes forked while a scan ran. Gives up on the tree after about a second (a process
 * in uninterruptible sleep), never on root.
 */
export async function killTree(root: number): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const below = descendantsOf(root);
    if (below.length === 0) break;
    below.forEach(kill);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  kill(root);
}
