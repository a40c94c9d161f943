// The sandbox scope an isolated session takes from its client's first root (R8D.7): a file:// URI
// naming an existing directory other than the filesystem root, resolved to its real path, checked
// exactly like --sandbox-scope (core's resolveSandboxScope), and apart from the server's private
// state: the sessions' processes keep their state there, so a scope that holds it, or lies in it,
// would let one session's commands write another's (its file arguments, its logs). Anything else
// is refused with a message that names the root.
import { relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AhmaError, resolveSandboxScope } from '@ahma/core';

export async function scopeOfRoot(
  uri: string,
  privatePaths: readonly string[] = [],
): Promise<string> {
  const origin = `the client's first root ${uri}`;
  let path: string;
  try {
    if (!uri.startsWith('file:')) throw new Error('not a file URI');
    path = fileURLToPath(uri);
  } catch {
    throw new AhmaError('SCOPE_INVALID', `${origin} is not a file:// URI of a local directory`);
  }
  const scope = await resolveSandboxScope({ scope: path, origin, cwd: path });
  const overlapping = privatePaths.find((other) => within(scope, other) || within(other, scope));
  if (overlapping !== undefined) {
    throw new AhmaError(
      'SCOPE_INVALID',
      `${origin} overlaps the server's private state ${overlapping}, which sessions must not write`,
    );
  }
  return scope;
}

/** `path` is `dir` or inside it. */
function within(path: string, dir: string): boolean {
  const rest = relative(dir, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}
