// One reading of /proc/PID/stat for the places that need a process's state, parent or start time:
// the watchdog's walk of a process tree and the owner tags of the state directories.
import { readFileSync } from 'node:fs';

export interface ProcStat {
  /** R, S, D, T, Z, X, … */
  readonly state: string;
  readonly ppid: number;
  /** Start time, in clock ticks after boot: tells a process from a later one with its pid. */
  readonly start: string;
}

/** The process's stat, or undefined when it is gone (or /proc cannot tell). */
export function procStat(pid: number | string): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${String(pid)}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and ')', so read after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ppid: Number(fields[1]), start: fields[19] ?? '' };
}

/** Still running or stoppable: neither a zombie nor dead. */
export const isLive = (stat: ProcStat): boolean => stat.state !== 'Z' && stat.state !== 'X';
