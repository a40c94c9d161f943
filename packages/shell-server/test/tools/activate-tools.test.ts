// Bundles on demand (SPEC §3): activate_tools lists the bundled catalogs whose program is
// installed here and reveals them with tools/list_changed; --tools reveals from the start;
// --no-tool-discovery hides it; the initialize instructions say how to work with the server.
// The real runtime in this process, the SDK's real Client over InMemoryTransport, real
// availability probes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  it,
  PACKAGE_DIR,
  sleep,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type E2E,
  type RunningServer,
  type Scope,
} from '../support/harness.js';

const CATALOG_DIR = join(PACKAGE_DIR, '..', '..', 'tools');

interface Bundle {
  name: string;
  summary: string;
  tools: number;
  installed: boolean;
  revealed: boolean;
  overridden: boolean;
  reason?: string;
  install_instructions?: string;
}
interface Listing {
  action: 'list';
  bundles: Bundle[];
  not_installed: Bundle[];
}
interface Revealed {
  action: 'reveal';
  revealed: string[];
  already_revealed: string[];
  tools: string[];
}

/** Each bundled definition: its name, probed program and install instructions, from tools/. */
const catalog = readdirSync(CATALOG_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => {
    const definition = JSON.parse(readFileSync(join(CATALOG_DIR, file), 'utf8')) as {
      name: string;
      availability_check: { command: string };
      install_instructions: string;
    };
    return {
      name: definition.name,
      program: definition.availability_check.command.split(' ')[0] ?? '',
      install: definition.install_instructions,
    };
  });

/** Whether `program` is an executable file in one of `dirs` (what the server's probe looks for). */
const onPath = (program: string, dirs: readonly string[]) =>
  dirs.some((dir) => {
    try {
      const stat = statSync(join(dir, program));
      return stat.isFile() && (stat.mode & 0o111) !== 0;
    } catch {
      return false;
    }
  });

/**
 * A PATH of one directory that holds only `programs` (links to the installed ones): every other
 * program is missing from it for certain, whatever this machine has installed (gh, say).
 */
async function pathOnly(e2e: E2E, programs: readonly string[]): Promise<string> {
  const dir = await e2e.outsideDir();
  const dirs = process.env['PATH']?.split(':') ?? [];
  for (const program of programs) {
    const installed = dirs.find((each) => onPath(program, [each]));
    if (installed === undefined) throw new Error(`${program} is not installed here`);
    await symlink(join(installed, program), join(dir, program));
  }
  return dir;
}

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

const list = async (server: RunningServer) => {
  const result = await server.call('activate_tools', { action: 'list' });
  expect(result.isError, textOf(result)).toBeFalsy();
  return { text: textOf(result), listing: structured<Listing>(result) };
};

const echoTool = (name: string, word: string) =>
  JSON.stringify({
    name,
    description: `Echo ${word}.`,
    command: `echo ${word}`,
    synchronous: true,
  });

const toolFile = (scope: Scope, name: string) => join(scope.dir, '.ahma', 'tools', `${name}.json`);

describe.concurrent('bundles on demand', { timeout: 60_000 }, () => {
  it('SPEC §3 bundles: list shows the installed bundles with summary, tool count and whether each is revealed (--tools reveals from the start)', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope, ['--tools', 'git']);
    const { text, listing } = await list(server);

    const installedHere = catalog.filter((b) =>
      onPath(b.program, process.env['PATH']?.split(':') ?? []),
    );
    expect(listing.bundles.map((b) => b.name)).toEqual(installedHere.map((b) => b.name).sort());
    expect(listing.not_installed.map((b) => b.name)).toEqual(
      catalog
        .filter((b) => !installedHere.includes(b))
        .map((b) => b.name)
        .sort(),
    );
    const git = listing.bundles.find((b) => b.name === 'git');
    const gitTools = (await toolNames(server)).filter((name) => name.startsWith('git_'));
    expect(git).toEqual({
      name: 'git',
      summary: 'Git version control for the repository in the working directory.',
      tools: gitTools.length,
      installed: true,
      revealed: true,
      overridden: false,
    });
    expect(listing.bundles.find((b) => b.name === 'file-tools')).toMatchObject({
      installed: true,
      revealed: false,
    });
    expect(text).toMatch(/^- git \(\d+ tools, revealed\): Git version control/m);
    expect(text).toMatch(/^- file-tools \(13 tools\): Everyday file commands/m);

    // With a name, list shows just that bundle.
    const one = structured<Listing>(
      await server.call('activate_tools', { action: 'list', bundle: 'file-tools' }),
    );
    expect(one.bundles.map((b) => b.name)).toEqual(['file-tools']);
  });

  it('SPEC §3 bundles: reveal sends tools/list_changed and serves the bundle, whose tools run in the sandbox', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(join(scope.dir, 'notes.txt'), 'one\n');
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    expect((await toolNames(server)).some((name) => name.startsWith('git_'))).toBe(false);

    const result = await server.call('activate_tools', { action: 'reveal', bundle: 'git' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const revealed = structured<Revealed>(result);
    expect(revealed).toMatchObject({ action: 'reveal', revealed: ['git'], already_revealed: [] });
    expect(revealed.tools).toEqual(
      expect.arrayContaining(['git_status', 'git_init', 'git_commit']),
    );
    expect(textOf(result)).toMatch(/^Revealed git\. Tools available: git_status, /);

    await waitFor(() => changes() >= 1, 'tools/list_changed');
    const names = await toolNames(server);
    expect(names.filter((name) => name.startsWith('git_'))).toEqual(revealed.tools);
    expect(structured<Listing>(await server.call('activate_tools', {})).bundles).toContainEqual(
      expect.objectContaining({ name: 'git', revealed: true }),
    );

    expect(structured<CommandResult>(await server.call('git_init', {})).status).toBe('completed');
    const status = structured<CommandResult>(await server.call('git_status', {}));
    expect(status).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(status.output).toContain('notes.txt');
  });

  it('SPEC §3 bundles: revealing an already revealed bundle is a success without a second tools/list_changed', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope, ['--tools', 'file-tools']);
    const changes = countListChanged(server);

    const again = await server.call('activate_tools', { action: 'reveal', bundle: 'file-tools' });
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(structured<Revealed>(again)).toMatchObject({
      revealed: [],
      already_revealed: ['file-tools'],
    });
    expect(structured<Revealed>(again).tools).toContain('file-tools_ls');

    const first = await server.call('activate_tools', { action: 'reveal', bundle: ['git'] });
    expect(structured<Revealed>(first).revealed).toEqual(['git']);
    await waitFor(() => changes() >= 1, 'tools/list_changed');
    const second = await server.call('activate_tools', { action: 'reveal', bundle: 'git' });
    expect(structured<Revealed>(second)).toMatchObject({ revealed: [], already_revealed: ['git'] });
    await sleep(500);
    expect(changes()).toBe(1);
  });

  it('SPEC §3 bundles: two concurrent reveals of one bundle both answer with its tools, and tools/list_changed is sent once', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    const [one, two] = await Promise.all([
      server.call('activate_tools', { action: 'reveal', bundle: 'git' }),
      server.call('activate_tools', { action: 'reveal', bundle: 'git' }),
    ]);
    const answers = [one, two].map((result) => {
      expect(result.isError, textOf(result)).toBeFalsy();
      const answer = structured<Revealed>(result);
      expect(answer.tools, textOf(result)).toEqual(
        expect.arrayContaining(['git_status', 'git_commit']),
      );
      return answer;
    });
    // Exactly one of the calls revealed it; the other found it revealed.
    expect(answers.map((a) => a.revealed).flat()).toEqual(['git']);
    await waitFor(() => changes() >= 1, 'tools/list_changed');
    await sleep(500);
    expect(changes()).toBe(1);
  });

  it('SPEC §3 bundles: a revealed bundle survives hot reloads', async ({ e2e }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    await server.call('activate_tools', { action: 'reveal', bundle: 'file-tools' });
    await waitFor(() => changes() >= 1, 'tools/list_changed of the reveal');

    await writeFile(toolFile(scope, 'fresh'), echoTool('fresh', 'x'));
    await waitFor(() => changes() >= 2, 'tools/list_changed of the hot reload');
    const names = await toolNames(server);
    expect(names).toContain('fresh');
    expect(names).toContain('file-tools_wc');
  });

  it("SPEC §3 bundles, R1.2: a project tool file with a bundle's name still replaces it after a reveal", async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(toolFile(scope, 'git'), echoTool('git', 'local-git'));
    const server = await e2e.inProcess(scope);
    const before = await toolNames(server);
    expect(before).toContain('git');

    const result = await server.call('activate_tools', { action: 'reveal', bundle: 'git' });
    expect(structured<Revealed>(result)).toMatchObject({ revealed: ['git'], tools: ['git'] });
    expect(await toolNames(server)).toEqual(before);
    expect(structured<CommandResult>(await server.call('git')).output).toBe('local-git\n');
    const { listing } = await list(server);
    expect(listing.bundles.find((b) => b.name === 'git')).toMatchObject({
      revealed: true,
      overridden: true,
    });
  });

  it("SPEC §3 bundles, R1.2: a bundle replaced by a project tool file is reported with the served file's availability, and revealing it succeeds", async ({
    e2e,
  }) => {
    // gh is missing on this PATH; the project's gh.json runs git, which is there.
    const dirs = [await pathOnly(e2e, ['git'])];
    expect(onPath('gh', dirs), 'gh must be missing from this PATH').toBe(false);
    const scope = await e2e.scope({ noTools: true });
    scope.env['PATH'] = dirs.join(':');
    await writeFile(
      toolFile(scope, 'gh'),
      JSON.stringify({
        name: 'gh',
        description: 'Project gh.',
        command: 'git',
        subcommand: [{ name: 'version', description: 'Git version.', synchronous: true }],
      }),
    );
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    expect(await toolNames(server)).toContain('gh_version');

    const { text, listing } = await list(server);
    expect(listing.not_installed.map((b) => b.name)).not.toContain('gh');
    expect(listing.bundles.find((b) => b.name === 'gh')).toMatchObject({
      installed: true,
      overridden: true,
      revealed: false,
      tools: 1,
    });
    expect(text).toMatch(/^- gh \(1 tools, replaced by a project tool file\)/m);
    expect(text).not.toContain('"gh" not found on PATH');

    const result = await server.call('activate_tools', { action: 'reveal', bundle: 'gh' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structured<Revealed>(result).tools).toEqual(['gh_version']);
    expect(textOf(result)).toContain(`served from the project tool file ${toolFile(scope, 'gh')}`);
    expect(structured<CommandResult>(await server.call('gh_version')).output).toMatch(
      /^git version /,
    );
    await sleep(300);
    expect(changes()).toBe(0);
  });

  it('SPEC §3 bundles: an unknown bundle is a tool error with a did-you-mean, and nothing of the call is revealed', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    const result = await server.call('activate_tools', {
      action: 'reveal',
      bundle: ['file-tools', 'gti'],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('No bundle named "gti". Did you mean "git"?');
    expect(textOf(result)).toMatch(/Bundles: cargo, file-tools, gh, git, /);
    await sleep(300);
    expect(changes()).toBe(0);
    expect((await toolNames(server)).some((name) => name.startsWith('file-tools_'))).toBe(false);

    const listed = await server.call('activate_tools', { bundle: 'pyhton' });
    expect(listed.isError).toBe(true);
    expect(textOf(listed)).toContain('Did you mean "python"?');
  });

  it('SPEC §3 bundles: reveal needs a bundle name; bad arguments are a tool error naming the field', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope({ noTools: true }));
    const missing = await server.call('activate_tools', { action: 'reveal' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/reveal needs "bundle"/);
    const wrong = await server.call('activate_tools', { action: 'show' });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/Invalid arguments for activate_tools:[^]*action/);
  });

  it('SPEC §3 bundles: a bundle whose program is not installed is listed apart, and revealing it is a tool error with its install instructions', async ({
    e2e,
  }) => {
    // A PATH with git alone: the other bundled programs are then missing for real, whatever this
    // machine has installed, and the server's probes must say so.
    const dirs = [await pathOnly(e2e, ['git'])];
    const missing = catalog.filter((b) => !onPath(b.program, dirs));
    expect(missing.length, 'a bundled program absent from /usr/bin:/bin').toBeGreaterThan(0);
    const absent = missing[0] ?? catalog[0];
    if (absent === undefined) throw new Error('empty catalog');

    const scope = await e2e.scope({ noTools: true });
    scope.env['PATH'] = dirs.join(':');
    const server = await e2e.inProcess(scope);
    const changes = countListChanged(server);
    const { text, listing } = await list(server);
    expect(listing.bundles.map((b) => b.name)).not.toContain(absent.name);
    expect(listing.not_installed).toContainEqual(
      expect.objectContaining({
        name: absent.name,
        installed: false,
        reason: `"${absent.program}" not found on PATH`,
        install_instructions: absent.install,
      }),
    );
    expect(text).toContain(`- ${absent.name}: "${absent.program}" not found on PATH`);
    // SPEC §3 bundles: the model reads the text, so the install instructions are there too.
    expect(text).toContain(
      `- ${absent.name}: "${absent.program}" not found on PATH\n  To install: ${absent.install}`,
    );

    // Filtered to a bundle that is missing: the answer says none of the named ones is installed
    // (others are) and lists them with the reason.
    const filtered = await server.call('activate_tools', { action: 'list', bundle: absent.name });
    expect(filtered.isError, textOf(filtered)).toBeFalsy();
    expect(textOf(filtered)).not.toContain('No bundle is installed here.');
    expect(textOf(filtered)).toMatch(/^None of the named bundles is installed here\./);
    expect(textOf(filtered)).toContain(`- ${absent.name}: "${absent.program}" not found on PATH`);

    const result = await server.call('activate_tools', { action: 'reveal', bundle: absent.name });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(
      `Bundle "${absent.name}" cannot be revealed: its program is not installed here`,
    );
    expect(textOf(result)).toContain(absent.install);
    await sleep(300);
    expect(changes()).toBe(0);
  });

  it('SPEC §3 bundles: the initialize instructions say to prefer these tools, how async results arrive, and name activate_tools', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope({ noTools: true }));
    const instructions = server.client.getInstructions() ?? '';
    expect(instructions.length).toBeGreaterThan(0);
    expect(instructions.length).toBeLessThan(1200);
    expect(instructions).toMatch(/terminal/);
    expect(instructions).toContain('its result is put before the result of your next tool call');
    expect(instructions).toContain('operation_id');
    expect(instructions).toContain('`await`');
    expect(instructions).toContain('`output` reads any part');
    expect(instructions).toContain('activate_tools');
  });

  it('SPEC §7 --no-tool-discovery: activate_tools is neither listed nor callable nor in the instructions; --tools still works', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    for (const server of [
      await e2e.inProcess(scope, ['--no-tool-discovery', '--tools', 'file-tools']),
      await e2e.inProcess({ ...scope, env: { ...scope.env, AHMA_NO_TOOL_DISCOVERY: '1' } }, [
        '--tools',
        'file-tools',
      ]),
    ]) {
      const names = await toolNames(server);
      expect(names).not.toContain('activate_tools');
      expect(names).toContain('file-tools_ls');
      expect(server.client.getInstructions()).not.toContain('activate_tools');
      expect(server.client.getInstructions()).toContain('before the result of your next tool call');
      await expect(server.call('activate_tools', { action: 'list' })).rejects.toThrow(
        /unknown tool "activate_tools"/,
      );
    }
  });

  it('R5.2: a tool file named activate_tools is refused; the built-in stays', async ({ e2e }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(toolFile(scope, 'activate_tools'), echoTool('activate_tools', 'hijack'));
    const server = await e2e.inProcess(scope, ['--log-to-stderr']);
    const { tools } = await server.client.listTools();
    const named = tools.filter((tool) => tool.name === 'activate_tools');
    expect(named).toHaveLength(1);
    expect(named[0]?.description).toMatch(/bundles/);
    expect(server.stderr()).toMatch(/"activate_tools" is the name of a built-in tool/);
    expect((await server.call('activate_tools', {})).isError).toBeFalsy();
  });
});
