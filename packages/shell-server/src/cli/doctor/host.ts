// What the doctor learns of the machine outside the sandbox: its kernel and the server's uid (the
// report's heading), and whether the server's user can create user namespaces here (tried with
// `unshare -U true`, with the kernel's switches for them).
import type { Environment } from '@ahma/core';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { release, type } from 'node:os';

/** `Linux 6.12.1, uid 1000`. */
export function machine(): string {
  return `${type()} ${release()}, uid ${String(process.getuid?.() ?? 'unknown')}`;
}

export interface UserNamespaces {
  /** Whether `unshare -U true` worked for the server's user, outside any sandbox. */
  readonly available: boolean | undefined;
  /** The kernel's switches and what unshare said, e.g. `max_user_namespaces=0`. */
  readonly detail: string;
}

export async function userNamespaces(env: Environment): Promise<UserNamespaces> {
  const switches: string[] = [];
  for (const [name, path] of [
    ['max_user_namespaces', '/proc/sys/user/max_user_namespaces'],
    ['unprivileged_userns_clone', '/proc/sys/kernel/unprivileged_userns_clone'],
    [
      'apparmor_restrict_unprivileged_userns',
      '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
    ],
  ] as const) {
    const value = await readFile(path, 'utf8').then(
      (text) => text.trim(),
      () => undefined,
    );
    if (value !== undefined) switches.push(`${name}=${value}`);
  }
  const tried = await new Promise<{ ok: boolean | undefined; message: string }>((resolve) => {
    execFile('unshare', ['-U', 'true'], { env, timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) resolve({ ok: true, message: '' });
      else if ((error as { code?: unknown }).code === 'ENOENT')
        resolve({ ok: undefined, message: 'unshare is not installed' });
      else resolve({ ok: false, message: stderr.trim().split('\n').pop() ?? error.message });
    });
  });
  const detail = [...switches, ...(tried.message === '' ? [] : [tried.message])].join(', ');
  return { available: tried.ok, detail };
}
