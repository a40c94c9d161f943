// Core's public API is what the other packages use, nothing else (issue 12 item 3): every name
// src/index.ts exports is used by another package's sources, tests, the benchmarks or scripts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The names src/index.ts exports. */
function exportedNames(): string[] {
  const index = readFileSync(join(ROOT, 'packages/core/src/index.ts'), 'utf8');
  return [...index.matchAll(/export (?:type )?\{([^}]*)\} from/g)].flatMap(([, body = '']) =>
    body
      .split(',')
      .map(
        (spec) =>
          spec
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)
            .pop() ?? '',
      )
      .filter((name) => name !== ''),
  );
}

/** Everything outside core that may use core: the other packages, the benchmarks, the scripts. */
function outsideCore(): string {
  const files = execFileSync('git', ['ls-files', 'packages', 'bench', 'scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => /\.(ts|mjs)$/.test(file) && !file.startsWith('packages/core/'));
  return files.map((file) => readFileSync(join(ROOT, file), 'utf8')).join('\n');
}

describe('@ahma/core exports', () => {
  it('issue 12: every export of core is used outside core', () => {
    const text = outsideCore();
    const names = exportedNames();
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((name) => !new RegExp(`\\b${name}\\b`).test(text))).toEqual([]);
  });
});
