// The bearer token of the HTTP server (SPEC §6 security, R8.11). HTTP is authenticated by default,
// on loopback too: any local process (another user's, a sandboxed command's) can reach a loopback
// port, and the Host/Origin guard stops browsers, not processes. The token comes from
// --http-token-file (the file's content, without the surrounding whitespace an editor adds), else
// from AHMA_HTTP_TOKEN, else from the server's own token file in its private state: made once
// (32 random bytes, mode 0600) and reused at every later start, so a client's configuration keeps
// working. Never logged or printed: messages name the file, not what it holds.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { readPrivateFile } from '@ahma/remote';
import { refusal, RefusalError } from '../../jsonrpc/refusal.js';

export type TokenSource =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'error'; readonly message: string };

/** The server's own token file, in the root of its private state. */
export const SERVER_TOKEN_FILE = 'http-token';

export async function loadToken(
  file: string | undefined,
  fromEnv: string | undefined,
): Promise<TokenSource> {
  if (file !== undefined) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      return { kind: 'error', message: `--http-token-file ${file}: cannot read it (${code})` };
    }
    return checked(text.trim(), `--http-token-file ${file}`);
  }
  if (fromEnv !== undefined && fromEnv !== '') return checked(fromEnv.trim(), 'AHMA_HTTP_TOKEN');
  return { kind: 'none' };
}

/**
 * The token of `<stateRoot>/http-token`, made now if there is none. The file must be a regular
 * file of this user that nobody else can read or write; anything else is refused, not repaired: it
 * would mean someone else had a hand in it.
 */
export async function serverToken(stateRoot: string): Promise<{ token: string; path: string }> {
  const path = join(stateRoot, SERVER_TOKEN_FILE);
  const made = randomBytes(32).toString('base64url');
  let handle: FileHandle;
  try {
    handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { token: await readOwnToken(path), path };
  }
  try {
    await handle.writeFile(`${made}\n`);
  } finally {
    await handle.close();
  }
  return { token: made, path };
}

/** The server's own token file is not one it can trust: the server does not start. */
async function readOwnToken(path: string): Promise<string> {
  const refuse = (why: string) =>
    new RefusalError(
      refusal(
        'start',
        `the HTTP token file ${path} ${why}; remove it and a new token is made at start`,
      ),
    );
  const read = await readPrivateFile(path, 4096);
  if (read.kind === 'missing') throw refuse('cannot be read (ENOENT)');
  if (read.kind === 'refused') {
    throw refuse(read.reason === 'too-large' ? 'is too large to be a token' : read.why);
  }
  const source = checked(read.text.trim(), `the HTTP token file ${path}`);
  if (source.kind !== 'token') {
    throw new RefusalError(refusal('start', source.kind === 'error' ? source.message : path));
  }
  return source.token;
}

/** A token is one word of visible ASCII: what fits in an Authorization header as it is. */
function checked(token: string, where: string): TokenSource {
  if (token === '') return { kind: 'error', message: `${where}: the token is empty` };
  if (!/^[\x21-\x7e]+$/.test(token)) {
    return {
      kind: 'error',
      message: `${where}: the token must be one word of visible ASCII characters`,
    };
  }
  return { kind: 'token', token };
}
