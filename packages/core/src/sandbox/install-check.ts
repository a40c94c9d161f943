// Ahma's own code must not lie where commands can write (R7.6). A project that installs Ahma as a
// dev dependency puts the server's JavaScript, its dependencies and the ahma-sandbox helper inside
// the scope: a command could rewrite them, and the rewrite would run unconfined at the next start.
// Code in a writable path cannot defend itself (a modified copy would skip any check), so the only
// safe answer is to refuse at the first start, before the helper runs, with the fix. The caller
// names the code (core imports no server); this module only resolves and compares paths.
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AhmaError } from '../errors.js';
import { isInside, overlapsWith } from '../paths/inside.js';
import type { LabelledPath } from '../state/paths.js';

/** Lines of the refusal that list offending paths; the rest is counted. */
const LISTED = 8;

/**
 * Throws INSTALL_UNSAFE when any code path — as spelled or really, since a link inside a writable
 * path can be re-pointed — lies inside a writable path. Paths that do not exist are skipped.
 */
export async function checkInstallLocation(
  code: readonly LabelledPath[],
  writable: readonly LabelledPath[],
): Promise<void> {
  const problems: string[] = [];
  const seen = new Set<string>();
  // All at once: a server's closure is a few hundred paths, and one after another they took 30 ms.
  const resolved = await Promise.all(
    code.map(async (entry) => {
      const spelled = resolve(entry.path);
      return { entry, spelled, real: await realpath(spelled).catch(() => undefined) };
    }),
  );
  // Either way round: a writable path inside a package (its dist/, say) is as bad.
  const clashOf = overlapsWith(writable);
  for (const { entry, spelled, real } of resolved) {
    if (real === undefined) continue;
    for (const path of new Set([spelled, real])) {
      const clash = clashOf(path);
      if (clash === undefined || seen.has(path)) continue;
      seen.add(path);
      problems.push(
        isInside(path, clash.path)
          ? `  ${path} (${entry.label}) is inside ${clash.label} ${clash.path}`
          : `  ${clash.label} ${clash.path} is inside ${path} (${entry.label})`,
      );
    }
  }
  if (problems.length === 0) return;
  const more = problems.length - LISTED;
  throw new AhmaError(
    'INSTALL_UNSAFE',
    [
      "Ahma refuses to start: its own code lies where sandboxed commands can write, so a command could change it and the change would run unconfined at Ahma's next start:",
      ...problems.slice(0, LISTED),
      ...(more > 0 ? [`  … and ${String(more)} more`] : []),
      'Code inside a writable path cannot protect itself. To fix: install Ahma outside the sandbox scope and',
      'every writable path — npm install -g @ahma/shell-server, or npx -y @ahma/shell-server as the',
      "client's command (npm keeps it in its cache), or a checkout of its own, built with pnpm build — and",
      'point your MCP client at that ahma-shell.',
    ].join('\n'),
  );
}

/**
 * The directory of the package at `packageDir` and of every dependency it declares (dependencies,
 * optional and peer), recursively, each found the way Node finds it: in the nearest node_modules
 * above the package that depends on it. Each comes as spelled (a link, with pnpm) and as real.
 * Synchronous on purpose: it runs once at start-up with nothing else to do, and a few hundred sync
 * calls (each node_modules directory listed once) take a fifth of the time of as many promises.
 */
export function packageClosure(packageDir: string): readonly LabelledPath[] {
  const key = resolve(packageDir);
  let closure = closures.get(key);
  if (closure === undefined) {
    closure = closureOf(key);
    closures.set(key, closure);
  }
  return closure;
}

/**
 * Closures already found, by package directory. A process's code is what it loaded at its start,
 * so its closure is found once (about 8 ms) however many runtimes the process makes; each start
 * still resolves and checks every path of it (checkInstallLocation).
 */
const closures = new Map<string, readonly LabelledPath[]>();

function closureOf(packageDir: string): readonly LabelledPath[] {
  const listings = new Map<string, ReadonlySet<string>>();
  const list = (dir: string): ReadonlySet<string> => {
    let names = listings.get(dir);
    if (names === undefined) {
      try {
        names = new Set(readdirSync(dir));
      } catch {
        names = new Set();
      }
      listings.set(dir, names);
    }
    return names;
  };
  // Node's lookup of a bare name: <ancestor>/node_modules/<name>, nearest first.
  const lookup = (name: string, fromDir: string): string | undefined => {
    const [first = '', second] = name.startsWith('@') ? name.split('/') : [name];
    for (let dir = fromDir; ; dir = dirname(dir)) {
      if (basename(dir) !== 'node_modules') {
        const modules = join(dir, 'node_modules');
        if (
          list(modules).has(first) &&
          (second === undefined || list(join(modules, first)).has(second))
        ) {
          return join(modules, name);
        }
      }
      if (dirname(dir) === dir) return undefined;
    }
  };

  const found: LabelledPath[] = [];
  const visited = new Set<string>();
  const queue = [packageDir];
  for (let spelled = queue.pop(); spelled !== undefined; spelled = queue.pop()) {
    let real: string;
    try {
      real = realpathSync.native(spelled);
    } catch {
      continue;
    }
    if (visited.has(real)) continue;
    visited.add(real);
    const manifest = readManifest(real);
    const label = `the package ${manifest.name ?? basename(real)}`;
    found.push({ path: spelled, label }, { path: real, label });
    const names = Object.keys({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
      ...manifest.peerDependencies,
    });
    for (const name of names) {
      const dir = lookup(name, real);
      if (dir !== undefined) queue.push(dir);
    }
  }
  return found;
}

interface Manifest {
  readonly name?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

function readManifest(dir: string): Manifest {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Manifest) : {};
  } catch {
    return {};
  }
}
