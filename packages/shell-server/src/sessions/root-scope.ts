// The sandbox scope an isolated session takes from its client's first root (R8D.7): a file:// URI
// naming an existing directory other than the filesystem root, resolved to its real path, checked
// exactly like --sandbox-scope (core's resolveSandboxScope). Anything else is refused with a
// message that names the root.
import { fileURLToPath } from 'node:url';
import { AhmaError, resolveSandboxScope } from '@ahma/core';

export async function scopeOfRoot(uri: string): Promise<string> {
  const origin = `the client's first root ${uri}`;
  let path: string;
  try {
    if (!uri.startsWith('file:')) throw new Error('not a file URI');
    path = fileURLToPath(uri);
  } catch {
    throw new AhmaError('SCOPE_INVALID', `${origin} is not a file:// URI of a local directory`);
  }
  return resolveSandboxScope({ scope: path, origin, cwd: path });
}
