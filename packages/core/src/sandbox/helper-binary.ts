// Where the compiled Landlock exec helper (native/ahma-sandbox.c, built into dist/native) lives,
// and how to ask it which Landlock ABI the kernel offers.
import { execFile } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Exit code of `ahma-sandbox` (and of --probe) when Landlock is unavailable (EX_CONFIG). */
export const LANDLOCK_UNAVAILABLE_EXIT = 78;

/**
 * The directory of dist/native/ that fits this machine: `linux-x64`, `linux-arm64` (Node's names
 * for the architectures). A published package ships both, linked statically, so glibc and musl
 * systems run the same file (scripts/build-native.mjs); a checkout builds its own machine's.
 */
export function nativeTarget(platform: string = process.platform, arch: string = process.arch) {
  return `${platform}-${arch}`;
}

/**
 * The helper binary's path. Core runs from its dist/ (dist/native beside it), in tests from
 * src/sandbox (dist/native two levels up), or bundled into a server's own dist/ (ahma-shell is one
 * file for a fast start): then the installed @ahma/core package is asked where it lives.
 */
export function defaultHelperPath(): string {
  const helper = `native/${nativeTarget()}/ahma-sandbox`;
  const candidates = [
    new URL(`./${helper}`, import.meta.url),
    new URL(`../../dist/${helper}`, import.meta.url),
    new URL(`./${helper}`, installedCore()),
  ].map((url) => fileURLToPath(url));
  return candidates.find((path) => existsSync(path)) ?? candidates[0] ?? 'ahma-sandbox';
}

/** The URL of @ahma/core's entry as the importing package resolves it (its dist/index.js). */
function installedCore(): string {
  try {
    return import.meta.resolve('@ahma/core');
  } catch {
    return import.meta.url;
  }
}

/**
 * Why the helper at `path` cannot be run, or undefined when it can. A helper that lost its
 * executable bits — a package unpacked without file modes — is given them back when this user owns
 * it; otherwise the answer says how to fix it, not that the kernel lacks Landlock.
 */
export function helperProblem(path: string): string | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  if (info === undefined) return missingHelper(path);
  if (!info.isFile()) return `the sandbox helper ${path} is not a file`;
  const machine = elfMachine(path);
  const expected = ELF_MACHINES[process.arch];
  if (machine !== undefined && expected !== undefined && machine !== expected) {
    return `the sandbox helper ${path} is not a program for this machine (${nativeTarget()}): reinstall Ahma, or build it from source (pnpm build in a checkout)`;
  }
  if ((info.mode & 0o111) !== 0) return undefined;
  const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
  if (info.uid === process.getuid?.()) {
    try {
      chmodSync(path, info.mode | 0o111);
      return undefined;
    } catch {
      // Told below, with the fix.
    }
  }
  return `the sandbox helper ${path} is not executable (mode ${mode}): its package was unpacked without file modes. To fix: chmod 755 ${path} (as its owner, uid ${String(info.uid)}), or reinstall Ahma`;
}

/** The ELF e_machine of each architecture Node runs on that Linux builds helpers for. */
const ELF_MACHINES: Readonly<Partial<Record<string, number>>> = {
  x64: 62,
  arm64: 183,
  arm: 40,
  ia32: 3,
  riscv64: 243,
  ppc64: 21,
  s390x: 22,
  loong64: 258,
};

/** The e_machine field of an ELF file (offset 18, little-endian), undefined for anything else. */
function elfMachine(path: string): number | undefined {
  const header = Buffer.alloc(20);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (readSync(fd, header, 0, 20, 0) < 20) return undefined;
  } catch {
    return undefined; // unreadable: the probe says why
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const isLittleEndianElf = header.readUInt32BE(0) === 0x7f454c46 && header[5] === 1;
  return isLittleEndianElf ? header.readUInt16LE(18) : undefined;
}

/**
 * Why no helper is at `path`: a package built without this machine's target says which target was
 * looked for, which it has, and how to build one; otherwise the install is incomplete.
 */
function missingHelper(path: string): string {
  const targetDir = dirname(path);
  const nativeDir = dirname(targetDir);
  const target = basename(targetDir);
  const shipped = existsSync(nativeDir)
    ? readdirSync(nativeDir).filter((name) => existsSync(join(nativeDir, name, 'ahma-sandbox')))
    : [];
  if (shipped.length > 0 && !shipped.includes(target)) {
    return `no sandbox helper for this machine (${target}) in ${nativeDir}, which has ${shipped.join(', ')}. To build one from source (needs a C compiler): clone Ahma's repository, run pnpm install && pnpm build in it (it compiles packages/core/dist/native/${target}/ahma-sandbox), and run that checkout's packages/shell-server/bin/ahma-shell.js`;
  }
  return `the sandbox helper ${path} is missing: reinstall Ahma, or in a checkout build @ahma/core (pnpm build), which compiles it with cc`;
}

export type ProbeResult =
  | {
      readonly available: true;
      readonly abi: number;
      /**
       * R7.11: whether the helper can keep the hand-off files read-only in a mount namespace of
       * its own (`mount`), or not (`none`, with the reason: they are then only watched).
       */
      readonly handoff: 'mount' | 'none';
      readonly handoffReason?: string;
    }
  | { readonly available: false; readonly reason: string };

/**
 * Runs `ahma-sandbox --probe`: the Landlock ABI and whether hand-off files can be protected (a
 * second line, `handoff=mount` or `handoff=none reason=…`), or why Landlock cannot be used.
 */
export function probeLandlock(helperPath: string): Promise<ProbeResult> {
  let probe = probes.get(helperPath);
  if (probe === undefined) {
    probe = runProbe(helperPath);
    probes.set(helperPath, probe);
    // Only an answer that Landlock works is kept: a failure (a helper not built yet, a timeout
    // under load) is asked again by the next sandbox.
    void probe.then((result) => {
      if (!result.available) probes.delete(helperPath);
    });
  }
  return probe;
}

/**
 * The probe of the default helper, run before any sandbox is made: by a process started ahead of
 * its scope (an isolated session's spare), so that the sandbox made once the scope is known takes
 * the answer kept below. Nothing where a sandbox would not probe: not Linux, or a helper that
 * cannot run (the sandbox then says why).
 */
export async function probeAhead(helperPath: string = defaultHelperPath()): Promise<void> {
  if (process.platform === 'linux' && helperProblem(helperPath) === undefined)
    await probeLandlock(helperPath);
}

/**
 * Probes by helper path. The kernel's Landlock ABI and whether this process may make a mount
 * namespace do not change while it runs, so a process that makes several sandboxes (an HTTP
 * server's sessions, a test file) runs the helper for them once.
 */
const probes = new Map<string, Promise<ProbeResult>>();

function runProbe(helperPath: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(helperPath, ['--probe'], { timeout: 10_000 }, (error, stdout, stderr) => {
      const abi = /^landlock-abi=(\d+)$/m.exec(stdout)?.[1];
      if (error === null && abi !== undefined) {
        const handoff = /^handoff=(mount|none)(?: reason=(.*))?$/m.exec(stdout);
        if (handoff?.[1] === 'mount') {
          resolve({ available: true, abi: Number(abi), handoff: 'mount' });
        } else {
          const why = handoff?.[2] ?? 'the sandbox helper did not say (an older helper?)';
          resolve({ available: true, abi: Number(abi), handoff: 'none', handoffReason: why });
        }
        return;
      }
      const code = (error as { code?: unknown } | null)?.code;
      const reason =
        code === 'ENOENT'
          ? `the sandbox helper ${helperPath} is missing: build @ahma/core (pnpm build), which compiles it with cc`
          : code === 'EACCES'
            ? `the sandbox helper ${helperPath} is not executable`
            : stderr.trim() || `the sandbox helper failed (${String(error?.message)})`;
      resolve({ available: false, reason });
    });
  });
}
