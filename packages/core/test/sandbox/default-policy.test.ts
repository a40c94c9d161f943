// R7.10: ordinary work still runs under the default read policy, with the server's real HOME (its
// toolchains under ~/.cargo, ~/.rustup, ~/.pyenv; its ~/.gitconfig; a ~/.npmrc that is denied):
// git, npm install, cargo build (offline, a vendored crate) and python3 -m venv, in the pool.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine.js';
import { bash, engineFixture, type EngineFixture } from '../support/engine.js';

const has = (program: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

let own: EngineFixture;
let engine: Engine;
/** What the engine logged as trouble (the pool's: a template shell that failed to start). */
const warnings: string[] = [];

const works = async (script: string, marker: string) => {
  const result = await engine.executor.run({
    command: { kind: 'argv', argv: bash(script) },
    cwd: own.scope,
    logName: 'default-policy',
  });
  expect(result.output, result.output).toContain(marker);
  expect(result.exitCode, result.output).toBe(0);
};

describe.runIf(process.platform === 'linux')(
  'R7.10: the default policy leaves ordinary work running',
  () => {
    beforeAll(async () => {
      const logger = {
        info: () => undefined,
        warn: (message: string) => warnings.push(message),
      };
      own = await engineFixture({ noShellPool: false, logger });
      engine = own.engine;
    }, 60_000);

    afterAll(async () => {
      await own.dispose();
    });

    it("R7.10: a script runs in a copy of the pool's template shell, which loads its builtin from the helper's directory", async () => {
      const result = await engine.executor.run({
        command: { kind: 'shell', script: 'echo "template:$$"' },
        cwd: own.scope,
        logName: 'default-policy',
      });
      expect(result.output).toMatch(/^template:\d+$/m);
      expect(warnings.join('\n')).not.toMatch(/template shell|ahma-unit\.so/);
    });

    it('R7.10: git init, add, commit and status', async () => {
      await works(
        [
          'git init -q repo && cd repo',
          'echo hi > a && git add a',
          'git -c user.name=t -c user.email=t@example.org commit -qm one',
          'git status --short && git log --oneline | wc -l && echo GIT-OK',
        ].join(' && '),
        'GIT-OK',
      );
    });

    it.runIf(has('npm'))(
      'R7.10: npm install of a local dependency, offline',
      async () => {
        await works(
          [
            'mkdir -p dep app',
            `echo '{"name":"dep","version":"1.0.0"}' > dep/package.json`,
            'cd app',
            `echo '{"name":"app","version":"1.0.0","dependencies":{"dep":"file:../dep"}}' > package.json`,
            'npm install --offline --no-audit --no-fund >/dev/null',
            'test -e node_modules/dep/package.json && echo NPM-OK',
          ].join(' && '),
          'NPM-OK',
        );
      },
      60_000,
    );

    it.runIf(has('cargo'))(
      'R7.10: cargo build --offline with a vendored crate',
      async () => {
        const manifest = (name: string, extra = '') =>
          `printf '[package]\\nname = "${name}"\\nversion = "0.1.0"\\nedition = "2021"\\n${extra}'`;
        await works(
          [
            'mkdir -p rs/vendor/dep/src rs/src && cd rs',
            `${manifest('dep')} > vendor/dep/Cargo.toml`,
            `echo 'pub fn seven() -> i32 { 7 }' > vendor/dep/src/lib.rs`,
            `${manifest('app', '[dependencies]\\ndep = { path = "vendor/dep" }\\n')} > Cargo.toml`,
            `echo 'fn main() { println!("CARGO-{}", dep::seven()); }' > src/main.rs`,
            'cargo build --offline -q && ./target/debug/app',
          ].join(' && '),
          'CARGO-7',
        );
      },
      120_000,
    );

    it.runIf(has('python3'))(
      'R7.10: python3 -m venv, and the venv runs',
      async () => {
        await works(
          'python3 -m venv .venv && .venv/bin/python -c "print(\'VENV-\' + str(6 * 7))"',
          'VENV-42',
        );
      },
      120_000,
    );
  },
);
