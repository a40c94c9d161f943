// The doctor's throwaway workspace: a scope with a git repository and an `.ahma` directory (the
// hand-off files a command must not change), and beside it, outside the scope, a directory holding
// a readable file and the planted secret. Under /var/tmp: the temp directory is writable by design,
// so nothing in it could stand for "outside". Removed by dispose(), whatever happened.
import type { Environment } from '@ahma/core';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Workspace {
  readonly base: string;
  /** The doctor's sandbox scope. */
  readonly scope: string;
  /** Outside the scope; granted for reading (doctor.ts), so a denial in it is a deny's doing. */
  readonly outside: string;
  /** A file in `outside` commands may read: the control of the secret's probe. */
  readonly publicFile: string;
  /** A file in `outside` the policy denies; its content is `token`. */
  readonly secretFile: string;
  /** Random: found in a command's output only if the secret (or the state file) was read. */
  readonly token: string;
  /** Whether git made the repository (else `.git/hooks` and `.git/config` were made by hand). */
  readonly git: boolean;
  dispose(): Promise<void>;
}

export const PUBLIC_CONTENT = 'ahma-doctor-public';

/** Creates the workspace (in os.tmpdir() only when /var/tmp cannot be used). */
export async function createWorkspace(env: Environment): Promise<Workspace> {
  const made = await mkdtemp('/var/tmp/ahma-doctor-').catch(() =>
    mkdtemp(join(tmpdir(), 'ahma-doctor-')),
  );
  const base = await realpath(made);
  const dispose = () => rm(base, { recursive: true, force: true });
  try {
    const scope = join(base, 'scope');
    const outside = join(base, 'outside');
    await mkdir(scope);
    await mkdir(outside);
    const token = `ahma-doctor-secret-${randomBytes(8).toString('hex')}`;
    const publicFile = join(outside, 'public');
    const secretFile = join(outside, 'secret');
    await writeFile(publicFile, PUBLIC_CONTENT);
    await writeFile(secretFile, token);
    const git = await gitInit(scope, env);
    await mkdir(join(scope, '.git', 'hooks'), { recursive: true });
    if (!git) await writeFile(join(scope, '.git', 'config'), '[core]\n\tbare = false\n');
    await mkdir(join(scope, '.ahma'));
    const workspace: Workspace = {
      base,
      scope,
      outside,
      publicFile,
      secretFile,
      token,
      git,
      dispose,
    };
    return workspace;
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** `git init` in the scope, as the server's user; false when git is missing or fails. */
function gitInit(dir: string, env: Environment): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('git', ['init', '--quiet', dir], { env, timeout: 10_000 }, (error) =>
      resolve(error === null),
    );
  });
}
