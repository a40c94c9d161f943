// Who made a state directory, written into its name: a server's directories are named after the
// machine, boot, pid namespace, pid and process start time of that server, plus a random part. The
// sweep at the next start removes only directories whose server is certainly gone; a name is made
// in one atomic mkdir, so there is no moment when a live server's directory looks ownerless.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { procStat } from '../process/proc-stat.js';
import { errorCode } from './paths.js';

export interface OwnerTag {
  /**
   * Hash of the host name and machine id: another machine sharing the directory (NFS home) is
   * never judged, even one with the same host name (cloned VMs, `localhost`).
   */
  readonly host: string;
  /** Start of the kernel's boot id, '0' when unknown: a different boot means the owner is gone. */
  readonly boot: string;
  /** The pid namespace's inode, '0' when unknown: pids of another namespace mean nothing here. */
  readonly ns: string;
  readonly pid: number;
  /** /proc/PID/stat start time (clock ticks after boot), '0' when unknown: tells pid reuse. */
  readonly start: string;
}

const TAG = /^([0-9a-f]{8})-([0-9a-f]{1,8})-(\d+)-(\d+)-(\d+)-[0-9a-f]{8}$/;

/** The tag of this process. */
export function ownTag(): OwnerTag {
  return {
    host: createHash('sha256').update(`${hostname()}\n${machineId()}`).digest('hex').slice(0, 8),
    boot: bootId(),
    ns: pidNamespace(),
    pid: process.pid,
    start: startTime(process.pid) ?? '0',
  };
}

/** A fresh directory name for this process: its tag and a random part. */
export function ownerName(tag: OwnerTag): string {
  const random = randomBytes(4).toString('hex');
  return `${tag.host}-${tag.boot}-${tag.ns}-${String(tag.pid)}-${tag.start}-${random}`;
}

/** The tag a directory name carries; undefined for names Ahma did not make. */
export function parseOwnerName(name: string): OwnerTag | undefined {
  const match = TAG.exec(name);
  if (match === null) return undefined;
  const [, host = '', boot = '', ns = '', pid = '', start = ''] = match;
  return { host, boot, ns, pid: Number(pid), start };
}

/**
 * True only when the process that made `tag` has certainly ended: same machine and a different
 * boot, or same machine, boot and pid namespace and no process with that pid and start time.
 * Anything it cannot judge (another machine or namespace) counts as alive.
 */
export function ownerIsGone(tag: OwnerTag, self: OwnerTag): boolean {
  if (tag.host !== self.host) return false;
  if (tag.boot !== '0' && self.boot !== '0' && tag.boot !== self.boot) return true;
  if (tag.ns !== self.ns) return false;
  if (self.start !== '0') {
    // /proc works here: the pid's start time tells the owner from a later process with its pid.
    const start = startTime(tag.pid);
    return start === undefined || start !== tag.start;
  }
  try {
    process.kill(tag.pid, 0);
    return false;
  } catch (error) {
    return errorCode(error) === 'ESRCH';
  }
}

/** The start time of pid (field 22 of /proc/PID/stat), or undefined when it is gone. */
function startTime(pid: number): string | undefined {
  const start = procStat(pid)?.start;
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

function bootId(): string {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').replaceAll('-', '').trim();
    return /^[0-9a-f]{8}/.test(id) ? id.slice(0, 8) : '0';
  } catch {
    return '0';
  }
}

function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** /etc/machine-id (systemd and most distributions), else empty. */
function machineId(): string {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim();
  } catch {
    return '';
  }
}
