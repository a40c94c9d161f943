// Shared support for the sandbox helper tests (sandbox/helper.test.ts: one command per helper,
// sandbox/zygote-*.test.ts through ./zygote.ts: the pool zygote; the process tests read /proc
// through it too): where the helper binary lives and how it is rebuilt, and what /proc says about
// processes — marked processes, parents and children, states, and waiting for a condition to hold.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
/** This machine's build (dist/native/linux-x64/, …: scripts/build-native.mjs). */
const targetDir = join(packageDir, 'dist', 'native', `${process.platform}-${process.arch}`);
export const helper = join(targetDir, 'ahma-sandbox');
/** The bash builtin the pool's template shell loads (native/bash/ahma-unit.c), beside the helper. */
export const unitBuiltin = join(targetDir, 'ahma-unit.so');
const nativeDir = join(packageDir, 'native');
const buildScript = join(packageDir, 'scripts', 'build-native.mjs');

/** The newest modification time in native/: both binaries are built from the files there. */
const newestSourceMs = (): number =>
  Math.max(
    ...readdirSync(nativeDir, { recursive: true, encoding: 'utf8' }).map(
      (name) => statSync(join(nativeDir, name)).mtimeMs,
    ),
  );

/** Compiles dist/native/ when a binary is missing or older than any file in native/. */
export function buildHelperIfStale(): void {
  const newest = newestSourceMs();
  const stale = [helper, unitBuiltin].some(
    (binary) => !existsSync(binary) || statSync(binary).mtimeMs < newest,
  );
  if (stale) execFileSync(process.execPath, [buildScript], { stdio: 'pipe' });
}

/** Single-quoted for bash. */
export const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

let markerCount = 0;
/**
 * A unique argv[0] (`exec -a MARKER-role cmd`) for the processes of one test, found again through
 * /proc/PID/cmdline. Only argv[0] counts: the shell scripts that start them carry the marker too.
 */
export const newMarker = (prefix = 'ahma-marker') =>
  `${prefix}-${process.pid}-${++markerCount}-${Date.now()}`;

/** The numeric entries of /proc: every process. */
const allPids = () =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);

/** Every process whose argv[0] starts with marker. */
export function pidsWithMarker(marker: string): number[] {
  return allPids().filter((pid) => {
    try {
      const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
      return argv0.startsWith(marker);
    } catch {
      return false; // exited while we looked
    }
  });
}

/** The fields of /proc/PID/stat after "pid (comm) ": comm may contain ')', so after the last. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // no such process (any more)
  }
}

/** The session id of /proc/PID/stat, undefined when there is no such process. */
export function sessionOf(pid: number): number | undefined {
  const session = statFields(pid)?.[3];
  return session === undefined ? undefined : Number(session);
}

/** The NUL-separated words of /proc/PID/cmdline ([] when there is no such process). */
export function cmdlineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

/** The state letter of /proc/PID/stat (R, S, Z, ...), undefined when there is no such process. */
export const processState = (pid: number): string | undefined => statFields(pid)?.[0];

/** pid -> ppid for every process. */
export function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const pid of allPids()) {
    const ppid = statFields(pid)?.[1];
    if (ppid !== undefined) table.set(pid, Number(ppid));
  }
  return table;
}

/** Every process whose parent chain includes root. */
export function descendantsOf(root: number): number[] {
  const table = processTable();
  const found: number[] = [];
  for (const pid of table.keys()) {
    for (let p = table.get(pid); p !== undefined && p > 1; p = table.get(p)) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** The children of parent, sorted. */
export const childrenOf = (parent: number) =>
  [...processTable()]
    .filter(([, ppid]) => ppid === parent)
    .map(([pid]) => pid)
    .sort((a, b) => a - b);

/** The comm of /proc/PID (the executable's name, 15 bytes at most), undefined when gone. */
export function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The process is gone for good: neither running nor a zombie waiting to be reaped. */
export const isGone = (pid: number) => !existsSync(`/proc/${pid}`);

/** The process exists (a zombie too) and may be signalled. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls condition every 20 ms until it holds; throws after timeoutMs. */
export async function waitFor(
  condition: () => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
