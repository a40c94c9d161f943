// Where the compiled Landlock exec helper (native/ahma-sandbox.c, built into dist/native) lives,
// and how to ask it which Landlock ABI the kernel offers.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Exit code of `ahma-sandbox` (and of --probe) when Landlock is unavailable (EX_CONFIG). */
export const LANDLOCK_UNAVAILABLE_EXIT = 78;

/**
 * The helper binary's path. Core runs from its dist/ (dist/native beside it), in tests from
 * src/sandbox (dist/native two levels up), or bundled into a server's own dist/ (ahma-shell is one
 * file for a fast start): then the installed @ahma/core package is asked where it lives.
 */
export function defaultHelperPath(): string {
  const candidates = [
    new URL('./native/ahma-sandbox', import.meta.url),
    new URL('../../dist/native/ahma-sandbox', import.meta.url),
    new URL('./native/ahma-sandbox', installedCore()),
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
  if (info === undefined) {
    return `the sandbox helper ${path} is missing: reinstall Ahma, or in a checkout build @ahma/core (pnpm build), which compiles it with cc`;
  }
  if (!info.isFile()) return `the sandbox helper ${path} is not a file`;
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
