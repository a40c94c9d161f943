// The bearer token of the HTTP server (SPEC §6 security): from --http-token-file (the file's
// content, without the surrounding whitespace an editor adds), else from AHMA_HTTP_TOKEN. Never
// logged or printed: errors name the file, not what it holds.
import { readFile } from 'node:fs/promises';

export type TokenSource =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'error'; readonly message: string };

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
