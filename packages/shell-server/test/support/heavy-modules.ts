// Which heavy modules a start of the built ahma-shell loaded (heavy-modules-hook.mjs says which
// count): the start's environment, and what it noted.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_DIR, type Scope } from './harness.js';

const HOOK = pathToFileURL(join(PACKAGE_DIR, 'test', 'support', 'heavy-modules-hook.mjs')).href;

export interface HeavyModules {
  /** The environment of the start to watch (add it to the scope's). */
  readonly env: Record<string, string>;
  /** What it loaded: `<what> <url>` lines (sdk-v2, iconv-lite), '' for nothing. */
  loaded(): Promise<string>;
}

/** Watches a start on `scope`; `name` keeps its note apart from other starts'. */
export function watchHeavyModules(scope: Scope, name: string): HeavyModules {
  const log = join(scope.tempDir, `${name}-heavy-modules.log`);
  return {
    env: { NODE_OPTIONS: `--import=${HOOK}`, AHMA_TEST_HEAVY_MODULES_LOG: log },
    loaded: () => readFile(log, 'utf8').catch(() => ''),
  };
}
