// Red team, argument injection (SPEC §2 argv, R7.6): a value given for a positional that starts
// with "-" would reach the program as an option, so the bundled catalog's git_log with
// revision "--output=<file>" made git write that file. Such a value is refused before anything
// runs, whoever the server runs as; the same word typed by hand proves the attack is real.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

const textOf = (result: { content?: unknown }) =>
  ((result.content as { type: string; text?: string }[] | undefined) ?? [])
    .map((part) => part.text ?? '')
    .join('\n');

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { args: ['--tools', 'git'] });

  it('R7.6: git_log {"revision": "--output=…"} is refused and writes nothing, inside the scope or out', async () => {
    const repo = await server().sh(
      'git init -q repo && git -C repo -c user.name=t -c user.email=t@t commit -q --allow-empty -m one && echo ready',
    );
    expect(repo.output).toContain('ready');
    for (const target of [join(seat().scope, 'pwned'), join(seat().outside, 'pwned')]) {
      const result = await server().call('git_log', {
        revision: `--output=${target}`,
        working_directory: 'repo',
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/"revision".*starts with "-"/s);
      expect(existsSync(target)).toBe(false);
    }
    // The attack is real: the same word given to git directly writes the file (in the scope).
    const direct = await server().sh(`git -C repo log --output=${join(seat().scope, 'direct')}`);
    expect(direct.exit_code).toBe(0);
    expect(existsSync(join(seat().scope, 'direct'))).toBe(true);
  });
});
