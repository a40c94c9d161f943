// Hot reload end to end over stdio: the tools directory is watched; a new, changed or deleted tool
// file is re-validated and swapped in with notifications/tools/list_changed; a broken edit keeps the
// last good definition; --no-hot-reload turns it off.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  it,
  sleep,
  structured,
  waitFor,
  type CommandResult,
  type RunningServer,
  type Scope,
} from '../support/harness.js';

const toolFile = (scope: Scope, name: string) => join(scope.dir, '.ahma', 'tools', `${name}.json`);

/** A synchronous echo tool `name` whose output is `word`. */
const echoTool = (name: string, word: string, description = `Echo ${word}.`) =>
  JSON.stringify({ name, description, command: `echo ${word}`, synchronous: true });

/** Counts the list_changed notifications the client receives. */
function countListChanged(server: RunningServer): () => number {
  let count = 0;
  server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++;
  });
  return () => count;
}

const toolNames = async (server: RunningServer) =>
  (await server.client.listTools()).tools.map((tool) => tool.name);

describe.concurrent('hot reload', { timeout: 60_000 }, () => {
  it('SPEC §6 hot reload: a new tool file appears with notifications/tools/list_changed and can be called', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    expect(await toolNames(server)).not.toContain('fresh');

    await writeFile(toolFile(scope, 'fresh'), echoTool('fresh', 'new-tool'));
    await waitFor(() => changes() >= 1, 'tools/list_changed');
    expect(await toolNames(server)).toContain('fresh');
    const result = structured<CommandResult>(await server.call('fresh'));
    expect(result).toMatchObject({ status: 'completed', output: 'new-tool\n' });
  });

  it('SPEC §6 hot reload: a changed file is swapped in; a broken edit keeps the last good definition (and says why)', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(toolFile(scope, 'edited'), echoTool('edited', 'one'));
    const server = await e2e.inProcess(scope, ['--log-to-stderr']);
    const changes = countListChanged(server);

    await writeFile(toolFile(scope, 'edited'), echoTool('edited', 'two'));
    await waitFor(() => changes() >= 1, 'the first reload');
    expect(structured<CommandResult>(await server.call('edited')).output).toBe('two\n');

    await writeFile(toolFile(scope, 'edited'), '{ "name": "edited", "description": ');
    await waitFor(() => /last good content stays in use/.test(server.stderr()), 'the warning');
    expect(server.stderr()).toMatch(/tool definition rejected: .*edited\.json/);
    expect(await toolNames(server)).toContain('edited');
    expect(structured<CommandResult>(await server.call('edited')).output).toBe('two\n');

    // Fixed again: the new definition wins.
    const before = changes();
    await writeFile(toolFile(scope, 'edited'), echoTool('edited', 'three'));
    await waitFor(() => changes() > before, 'the reload after the fix');
    expect(structured<CommandResult>(await server.call('edited')).output).toBe('three\n');
  });

  it('SPEC §6 hot reload: deleting a file removes its tools; a burst of changes is one reload', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(toolFile(scope, 'doomed'), echoTool('doomed', 'x'));
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    expect(await toolNames(server)).toContain('doomed');

    await rm(toolFile(scope, 'doomed'));
    await waitFor(() => changes() >= 1, 'tools/list_changed');
    expect(await toolNames(server)).not.toContain('doomed');

    const before = changes();
    for (let i = 0; i < 5; i++)
      await writeFile(toolFile(scope, `burst${String(i)}`), echoTool(`burst${String(i)}`, 'b'));
    await waitFor(async () => (await toolNames(server)).includes('burst4'), 'the burst loaded');
    await sleep(600);
    expect(changes() - before).toBeLessThanOrEqual(2);
  });

  it('SPEC §6 hot reload: a tools directory created after start is loaded when it appears, and its removal removes its tools', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const dir = join(scope.dir, '.ahma', 'tools');
    await rm(dir, { recursive: true });
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);

    await mkdir(dir);
    await writeFile(toolFile(scope, 'late'), echoTool('late', 'arrived'));
    await waitFor(() => changes() >= 1, 'tools/list_changed after the directory appeared');
    expect(await toolNames(server)).toContain('late');
    expect(structured<CommandResult>(await server.call('late')).output).toBe('arrived\n');

    const before = changes();
    await rm(dir, { recursive: true });
    await waitFor(() => changes() > before, 'tools/list_changed after the directory went');
    expect(await toolNames(server)).not.toContain('late');

    // And back again.
    await mkdir(dir);
    await writeFile(toolFile(scope, 'again'), echoTool('again', 'back'));
    await waitFor(async () => (await toolNames(server)).includes('again'), 'the directory again');
  });

  it('SPEC §6 hot reload: a broken tool_guidance.json keeps its last good blocks, so the tools that use them stay', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const guidance = join(scope.dir, '.ahma', 'tools', 'tool_guidance.json');
    await writeFile(guidance, JSON.stringify({ guidance_blocks: { careful: 'Be careful.' } }));
    await writeFile(
      toolFile(scope, 'guided'),
      JSON.stringify({
        name: 'guided',
        description: 'Echo guided.',
        command: 'echo guided',
        synchronous: true,
        guidance_key: 'careful',
      }),
    );
    const server = await e2e.inProcess(scope, ['--log-to-stderr']);
    const describe = async () =>
      (await server.client.listTools()).tools.find((tool) => tool.name === 'guided')?.description;
    expect(await describe()).toBe('Be careful.\n\nEcho guided.');

    await writeFile(guidance, '{ "guidance_blocks": ');
    await waitFor(() => /last good content stays in use/.test(server.stderr()), 'the warning');
    expect(server.stderr()).toMatch(/last good content stays in use[^]*tool_guidance\.json/);
    expect(await describe()).toBe('Be careful.\n\nEcho guided.');
  });

  it('SPEC §6 hot reload: a save that changes nothing a client sees, or a non-JSON file, sends no list_changed', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(toolFile(scope, 'steady'), echoTool('steady', 'x'));
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    await writeFile(toolFile(scope, 'steady'), echoTool('steady', 'x'));
    await writeFile(join(scope.dir, '.ahma', 'tools', '.steady.json.swp'), 'editor junk');
    await sleep(800);
    expect(changes()).toBe(0);
    // A real change still is news.
    await writeFile(toolFile(scope, 'steady'), echoTool('steady', 'y'));
    await waitFor(() => changes() === 1, 'tools/list_changed');
  });

  it('SPEC §6 hot reload: --no-hot-reload keeps the tools as they were at start', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope, ['--no-hot-reload']);
    const changes = countListChanged(server);
    await writeFile(toolFile(scope, 'ignored'), echoTool('ignored', 'x'));
    await sleep(800);
    expect(changes()).toBe(0);
    expect(await toolNames(server)).not.toContain('ignored');
  });
});
