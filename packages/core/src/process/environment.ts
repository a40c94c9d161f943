// The environment every command runs with: non-interactive (a prompt fails fast instead of hanging),
// with the caches tools write in HOME redirected into a per-server directory that the sandbox lets
// them write, and without the variables the server denies them (R7.9: Ahma's secrets, the API
// keys livelog tools name, --env-deny).
import { join } from 'node:path';
import { AhmaError } from '../errors.js';

/**
 * An environment as a process is given it (process.env): a variable may be unset. The server's
 * own, read for its settings and the base of every command's; one type for every package.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

/** A command's environment: every variable set, built from an Environment (commandEnv below). */
export type CommandEnvironment = Record<string, string>;

/** Variables that make tools behave non-interactively (SPEC §3). */
export const NON_INTERACTIVE_ENV: Readonly<CommandEnvironment> = {
  CI: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  DEBIAN_FRONTEND: 'noninteractive',
  // ssh (and git over ssh) must not wait for a passphrase or host-key answer.
  GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
  SSH_ASKPASS_REQUIRE: 'never',
  // Output is read by a model: no colours or cursor tricks (escapes are stripped anyway).
  NO_COLOR: '1',
  TERM: 'dumb',
};

/**
 * Variables never passed on: askpass helpers would pop up dialogs, and BASH_ENV / ENV name files
 * that non-interactive shells run before every script (sandboxed_shell would differ per user).
 */
const REMOVED_ENV: ReadonlySet<string> = new Set(['SSH_ASKPASS', 'GIT_ASKPASS', 'BASH_ENV', 'ENV']);

/** Cache variables pointed into the per-server cache directory, by subdirectory. */
export const CACHE_ENV: Readonly<Record<string, string>> = {
  XDG_CACHE_HOME: 'xdg',
  npm_config_cache: 'npm',
  PIP_CACHE_DIR: 'pip',
  UV_CACHE_DIR: 'uv',
  YARN_CACHE_FOLDER: 'yarn',
  GOCACHE: 'go-build',
  GOMODCACHE: 'go-mod',
};

/**
 * The command environment: the server's environment without the denied variables (R7.9), then the
 * cache redirections (when a cache root is given), then the non-interactive settings, which always
 * win. `deny` holds variable names and globs (see envDenyMatcher); entries are checked first.
 */
export function commandEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  cacheRoot: string | undefined,
  deny: readonly string[] = [],
): CommandEnvironment {
  const denied = envDenyMatcher(deny);
  const env: CommandEnvironment = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !REMOVED_ENV.has(key) && !denied(key)) env[key] = value;
  }
  if (cacheRoot !== undefined) {
    for (const [key, dir] of Object.entries(CACHE_ENV)) env[key] = join(cacheRoot, dir);
  }
  return Object.assign(env, NON_INTERACTIVE_ENV);
}

/** An --env-deny entry: a variable name, or a glob of names (`*` any run, `?` one character). */
const ENV_DENY_ENTRY = /^[A-Za-z0-9_*?]+$/;

/** Why `entry` cannot be an --env-deny entry (a clear, complete message), or undefined. */
export function envDenyProblem(entry: string): string | undefined {
  if (ENV_DENY_ENTRY.test(entry)) return undefined;
  return `--env-deny: ${JSON.stringify(entry)} is not a variable name or a glob of names: use only letters, digits, "_", and "*" (any run of characters) or "?" (one character)`;
}

/**
 * R7.9: the test of denied variables: a name is denied when it equals an entry, or matches an
 * entry's glob whole (case-sensitive, as variable names are). Throws AhmaError (CONFIG_INVALID)
 * for a malformed entry, so that a typo never silently denies nothing.
 */
export function envDenyMatcher(deny: readonly string[]): (name: string) => boolean {
  const names = new Set<string>();
  const globs: RegExp[] = [];
  for (const entry of deny) {
    const problem = envDenyProblem(entry);
    if (problem !== undefined) throw new AhmaError('CONFIG_INVALID', problem);
    if (/[*?]/.test(entry)) {
      // Only [A-Za-z0-9_*?] remain: nothing else needs escaping.
      globs.push(new RegExp(`^${entry.replaceAll('*', '.*').replaceAll('?', '.')}$`, 's'));
    } else {
      names.add(entry);
    }
  }
  return (name) => names.has(name) || globs.some((glob) => glob.test(name));
}

/**
 * The temp directory an environment names, as os.tmpdir() finds it in the process's own: TMPDIR,
 * TMP, TEMP, else /tmp (trailing slashes removed). Lets a server take its temp directory from the
 * environment it is given instead of the process's.
 */
export function tempDirectory(env: Readonly<Record<string, string | undefined>>): string {
  const named = [env['TMPDIR'], env['TMP'], env['TEMP']].find(
    (value) => value !== undefined && value !== '',
  );
  const trimmed = named?.replace(/(?<=.)\/+$/, '');
  return trimmed ?? '/tmp';
}
