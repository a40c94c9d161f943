// The environment every command runs with: non-interactive (a prompt fails fast instead of hanging),
// and with the caches tools write in HOME redirected into a per-server directory that the sandbox
// lets them write.
import { join } from 'node:path';

export type Environment = Record<string, string>;

/** Variables that make tools behave non-interactively (SPEC §3). */
export const NON_INTERACTIVE_ENV: Readonly<Environment> = {
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
 * The command environment: the server's environment, then the cache redirections (when a cache
 * root is given), then the non-interactive settings, which always win.
 */
export function commandEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  cacheRoot: string | undefined,
): Environment {
  const env: Environment = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !REMOVED_ENV.has(key)) env[key] = value;
  }
  if (cacheRoot !== undefined) {
    for (const [key, dir] of Object.entries(CACHE_ENV)) env[key] = join(cacheRoot, dir);
  }
  return Object.assign(env, NON_INTERACTIVE_ENV);
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
