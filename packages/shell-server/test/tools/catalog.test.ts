// The bundled catalog through the server (SPEC §2 catalog): `--tools` enables definitions from
// tools/ by name, their availability checks run, and their tools are called like any other.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it, structured, textOf, type CommandResult } from '../support/harness.js';

describe.concurrent('the bundled catalog', { timeout: 60_000 }, () => {
  it("R1.2: --tools git,file-tools lists their tools beside the project's, and they run in the sandbox", async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(join(scope.dir, 'notes.txt'), 'one\ntwo\n');
    const server = await e2e.inProcess(scope, ['--tools', 'git,file-tools']);
    const names = (await server.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['git_status', 'git_commit', 'file-tools_ls', 'file-tools_wc']),
    );
    expect(names.some((name) => name.startsWith('cargo_'))).toBe(false); // only what was asked for

    const wc = structured<CommandResult>(
      await server.call('file-tools_wc', { lines: true, paths: ['notes.txt'] }),
    );
    expect(wc).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(wc.output).toMatch(/^2 .*notes\.txt\n$/);

    const init = structured<CommandResult>(await server.call('git_init', {}));
    expect(init.status).toBe('completed');
    const status = structured<CommandResult>(await server.call('git_status', {}));
    expect(status).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(status.output).toContain('notes.txt');
  });

  it('SPEC §2 argv: git_log with a revision starting with "-" is a tool error naming the field; git never runs', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope, ['--tools', 'git']);
    expect(structured<CommandResult>(await server.call('git_init', {})).status).toBe('completed');
    const pwned = join(scope.dir, 'pwned');
    const result = await server.call('git_log', { revision: `--output=${pwned}` });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`argument "revision": "--output=${pwned}" starts with "-"`);
    expect(existsSync(pwned)).toBe(false);
  });
});
