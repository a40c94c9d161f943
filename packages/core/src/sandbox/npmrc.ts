// R7.10: `~/.npmrc` is on the credential deny list (registry tokens), but it also holds settings
// commands need (a registry mirror, `nodedir`, `fund=false`). So commands get a copy without the
// credentials, in the server's cache directory, named by npm_config_userconfig; the file itself
// stays unreadable. Nothing is done when the file is not denied (--allow-read ~/.npmrc, or a user
// config named elsewhere) or does not exist.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../paths/read-regular.js';
import { deniedBy, type DenyEntry } from './read-policy.js';

/** The keys of an npmrc line that carry a credential, also scoped (`//host/:_authToken`). */
const CREDENTIAL_KEY =
  /(?:^|:)(?:_authToken|_auth|_password|password|username|email|certfile|keyfile|cert|key|otp)$/i;

/** The lines of an npmrc without its credentials (comments and blank lines kept). */
export function withoutCredentials(text: string): string {
  return text
    .split('\n')
    .filter((line) => {
      const key = /^\s*([^=;#\s][^=]*?)\s*=/.exec(line)?.[1];
      return key === undefined || !CREDENTIAL_KEY.test(key);
    })
    .join('\n');
}

/**
 * Writes the credential-free copy of npm's user config — the file npm_config_userconfig names (npm
 * sets it for what it runs, so a server started by npx has it), else HOME's .npmrc — into
 * `cacheDir` when commands may not read the original; the variables that point npm at the copy
 * (empty when there is nothing to copy).
 */
export function npmrcForCommands(
  base: Readonly<Record<string, string | undefined>>,
  home: string | undefined,
  denies: readonly DenyEntry[],
  cacheDir: string,
): Record<string, string> {
  const named = base['npm_config_userconfig'] ?? base['NPM_CONFIG_USERCONFIG'];
  const original = named ?? (home === undefined ? undefined : join(home, '.npmrc'));
  if (original === undefined || deniedBy(denies, original) === undefined) return {};
  let text: string;
  try {
    // Never a FIFO or a device: the file npm_config_userconfig names may lie where commands write.
    text = readRegularFileSync(original, 1024 * 1024);
  } catch {
    return {};
  }
  const copy = join(cacheDir, 'npmrc');
  // A fresh file in a fresh directory: commands write there, but none has run yet (O_EXCL).
  writeFileSync(copy, withoutCredentials(text), { mode: 0o600, flag: 'wx' });
  return { npm_config_userconfig: copy, NPM_CONFIG_USERCONFIG: copy };
}
