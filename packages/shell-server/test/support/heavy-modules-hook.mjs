// Loaded into ahma-shell by NODE_OPTIONS=--import (heavy-modules.ts): appends to the file named by
// AHMA_TEST_HEAVY_MODULES_LOG a line `<what> <url>` for each loaded module that holds code a start
// should not need — the SDK v2's server, the encodings library of the SDK's SSE transport — found
// by the source path the bundle keeps in a comment for what it bundled.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
const HEAVY = { 'sdk-v2': '@modelcontextprotocol/server/dist/', 'iconv-lite': '/iconv-lite@' };
export async function load(url, context, next) {
  const loaded = await next(url, context);
  const source = String(loaded.source ?? '');
  for (const [what, marker] of Object.entries(HEAVY)) {
    if (source.includes(marker)) {
      appendFileSync(process.env.AHMA_TEST_HEAVY_MODULES_LOG, what + ' ' + url + '\\n');
    }
  }
  return loaded;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
