// Red team, R7.11: trust hand-off files. A project with a git repository, Ahma tool files and
// editor tasks; commands try to plant what would run later outside any sandbox — a pre-commit
// hook, core.hooksPath, a tool file, a VS Code task — directly and by moving the directory that
// holds it away and building a new one. Nothing may change on disk, while git itself keeps
// working. A hand-off file made where none existed when the server started is reported in the
// result and protected from the next command on. Run as root and as an ordinary user.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import {
  asIdentity,
  confined,
  eachIdentity,
  redTeamFile,
  treeState,
  type Identity,
  type Seat,
} from './harness.js';

const run = promisify(execFile);
const file = redTeamFile([]);

const TASKS = '{"version":"2.0.0","tasks":[]}\n';
const TOOL = '{"name":"hello","description":"Says hello.","command":"echo"}\n';

/** `git ARGS` in the scope as the identity, outside the sandbox (the project as the user made it). */
async function git(identity: Identity, scope: string, args: readonly string[]): Promise<void> {
  const { command, args: argv } = asIdentity(identity, 'git', ['-C', scope, ...args]);
  await run(command, argv);
}

async function project(seat: Seat): Promise<void> {
  await git(seat.identity, seat.scope, ['init', '-q']);
  await seat.mkdir(join(seat.scope, '.ahma'));
  await seat.mkdir(join(seat.scope, '.ahma', 'tools'));
  await seat.write(join(seat.scope, '.ahma', 'tools', 'hello.json'), TOOL);
  await seat.mkdir(join(seat.scope, '.vscode'));
  await seat.write(join(seat.scope, '.vscode', 'tasks.json'), TASKS);
}

const EVIL = 'echo rt-pwned > /tmp/rt-pwned';

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { prepare: project });

  it('R7.11: a command cannot plant a git hook, core.hooksPath, a tool file or an editor task, not even by moving .git, .git/hooks, .ahma or .vscode away', async () => {
    const scope = seat().scope;
    const hooks = join(scope, '.git', 'hooks');
    const before = {
      git: await treeState(join(scope, '.git', 'hooks')),
      config: await readFile(join(scope, '.git', 'config'), 'utf8'),
      ahma: await treeState(join(scope, '.ahma')),
      vscode: await treeState(join(scope, '.vscode')),
    };
    const attempts = [
      `printf '#!/bin/sh\\n${EVIL}\\n' > .git/hooks/pre-commit`,
      'git config core.hooksPath /tmp/rt-hooks',
      'git config core.fsmonitor "sh -c evil"',
      'mv .git/hooks hooks-away && mkdir .git/hooks && echo evil > .git/hooks/pre-commit',
      'rm -rf .git/hooks',
      'mv .git .git-away && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit',
      'rm -rf .ahma',
      `mv .ahma ahma-away && mkdir -p .ahma/tools && echo '${TOOL}' > .ahma/tools/evil.json`,
      `echo '${TOOL}' > .ahma/tools/evil.json`,
      'mv .vscode vscode-away && mkdir .vscode && echo evil > .vscode/tasks.json',
      'echo evil > .vscode/tasks.json',
      'ln -sf /tmp/rt-evil .git/hooks/post-checkout',
    ];
    for (const attempt of attempts) {
      const result = await server().sh(attempt);
      expect(result.exit_code, `${attempt}\n${result.output}`).not.toBe(0);
    }
    expect(await treeState(hooks)).toEqual(before.git);
    expect(await readFile(join(scope, '.git', 'config'), 'utf8')).toBe(before.config);
    expect(await treeState(join(scope, '.ahma'))).toEqual(before.ahma);
    expect(await treeState(join(scope, '.vscode'))).toEqual(before.vscode);
    expect(existsSync(join(scope, '.git-away'))).toBe(false);
    // git itself still works: the index, objects and refs are not hand-off files.
    const work = await server().sh(
      'echo hi > a && git add a && git -c user.name=rt -c user.email=rt@example.org commit -qm one && git status --short && git log --oneline | wc -l',
    );
    expect(work.exit_code, work.output).toBe(0);
    expect(work.output.trim()).toMatch(/^1$/m);
  });

  it('R7.11, R7.13: git config fails with an explanation naming the rule and --allow-handoff-writes', async () => {
    const result = await server().sh('git config user.name rt-user');
    expect(result.exit_code).not.toBe(0);
    expect(result.output).toContain('[ahma sandbox]');
    expect(result.output).toContain('--allow-handoff-writes .git/config');
  });

  it('R7.11: a hand-off file made where none existed is reported, and protected from the next command on', async () => {
    const scope = seat().scope;
    const made = await server().sh(`echo '${EVIL}' > .envrc && echo '{}' > .mcp.json`);
    expect(made.exit_code, made.output).toBe(0);
    expect(made.output).toContain('hand-off files changed while this command ran');
    expect(made.output).toContain('created .envrc');
    expect(made.output).toContain('created .mcp.json');
    const changed = await server().sh('echo more >> .envrc');
    expect(changed.exit_code, changed.output).not.toBe(0);
    expect(await readFile(join(scope, '.envrc'), 'utf8')).toBe(`${EVIL}\n`);
  });

  it('R7.11: --allow-handoff-writes .git/config lets git config write it; the hooks stay protected', async () => {
    const own = await seat().server(['--allow-handoff-writes', '.git/config']);
    try {
      const configured = await own.sh('git config user.name rt-allowed && git config user.name');
      expect(configured.exit_code, configured.output).toBe(0);
      expect(configured.output).toContain('rt-allowed');
      const hook = await own.sh('echo evil > .git/hooks/pre-commit');
      expect(hook.exit_code).not.toBe(0);
    } finally {
      await own.close();
    }
  });
});
