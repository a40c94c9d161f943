// The sandbox scope (R7.1): the one directory tree commands may write to. Fixed when a server or
// session starts; nothing an agent sends can change or widen it.
import { realpath, stat } from 'node:fs/promises';
import { parse } from 'node:path';
import { AhmaError } from '../errors.js';

/** Environment variable naming the scope when no option does. */
export const SANDBOX_SCOPE_ENV = 'AHMA_SANDBOX_SCOPE';

export interface ScopeSource {
  /** `--sandbox-scope`, when given. */
  readonly scope?: string | undefined;
  /** Where `scope` came from, for refusals (default `--sandbox-scope`; a session: its root). */
  readonly origin?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The process's working directory, the last resort. */
  readonly cwd: string;
}

/**
 * `--sandbox-scope`, else `AHMA_SANDBOX_SCOPE`, else the working directory; resolved to its real
 * path. A filesystem root is refused: it would make the sandbox meaningless.
 */
export async function resolveSandboxScope(source: ScopeSource): Promise<string> {
  const fromEnv = source.env?.[SANDBOX_SCOPE_ENV];
  const [given, origin] =
    source.scope !== undefined && source.scope !== ''
      ? [source.scope, source.origin ?? '--sandbox-scope']
      : fromEnv !== undefined && fromEnv !== ''
        ? [fromEnv, SANDBOX_SCOPE_ENV]
        : [source.cwd, 'the working directory'];
  let real: string;
  try {
    real = await realpath(given);
  } catch {
    throw new AhmaError('SCOPE_INVALID', `sandbox scope ${given} (from ${origin}) does not exist`);
  }
  if (!(await stat(real)).isDirectory()) {
    throw new AhmaError(
      'SCOPE_INVALID',
      `sandbox scope ${given} (from ${origin}) is not a directory`,
    );
  }
  if (parse(real).root === real) {
    throw new AhmaError(
      'SCOPE_INVALID',
      `the sandbox scope cannot be the filesystem root (${real}, from ${origin}): commands could write anywhere`,
      {
        cause: {
          hint: 'start the server in your project directory or pass --sandbox-scope <project>',
        },
      },
    );
  }
  return real;
}
