// Loaded into ahma-shell by NODE_OPTIONS=--import (modern.test.ts): appends to the file named by
// AHMA_TEST_SDK_V2_LOG each module that holds the SDK v2's server code (the bundle keeps the source
// path of what it bundled in a comment), so a test can say whether a start loaded it.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  const loaded = await next(url, context);
  const source = String(loaded.source ?? '');
  if (source.includes('@modelcontextprotocol/server/dist/')) {
    appendFileSync(process.env.AHMA_TEST_SDK_V2_LOG, url + '\\n');
  }
  return loaded;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
