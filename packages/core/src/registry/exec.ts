// Where a registered command's executable is (FR6.2 at registration, EC3 at every call): an
// absolute path, a path relative to the sandbox scope (it has a "/"), or a bare name looked up on
// PATH like execvp does. It must be a regular file this process may execute.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { AhmaError } from '../errors.js';

export interface ExecLookup {
  /** The sandbox scope: the base of a relative exec. */
  readonly scope: string;
  /** The PATH bare names are looked up on (the commands' environment's). */
  readonly path: string | undefined;
}

/** The absolute path `exec` runs, or EXEC_NOT_FOUND saying what was tried. */
export async function resolveExecutable(exec: string, lookup: ExecLookup): Promise<string> {
  if (exec.includes('/')) {
    const file = isAbsolute(exec) ? exec : resolve(lookup.scope, exec);
    const problem = await notExecutable(file);
    if (problem === undefined) return file;
    throw new AhmaError('EXEC_NOT_FOUND', `exec ${exec}: ${file} ${problem}`);
  }
  const dirs = (lookup.path ?? '').split(delimiter).filter((dir) => isAbsolute(dir));
  for (const dir of dirs) {
    const file = join(dir, exec);
    if ((await notExecutable(file)) === undefined) return file;
  }
  const local = (await notExecutable(join(lookup.scope, exec))) === undefined;
  throw new AhmaError(
    'EXEC_NOT_FOUND',
    `exec ${exec}: no executable of that name on PATH` +
      (local ? `; the file in the sandbox scope is named with a path: ./${exec}` : ''),
  );
}

/** Why `file` cannot be run, or undefined when it can. */
async function notExecutable(file: string): Promise<string | undefined> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return 'does not exist';
  if (!info.isFile()) return 'is not a file';
  return access(file, constants.X_OK).then(
    () => undefined,
    () => 'is not executable (chmod +x it)',
  );
}
