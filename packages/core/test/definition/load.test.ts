// R1.1–R1.3, R5.2: loading the tools a server offers from a tools directory and the bundled catalog.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ASYNC_GUIDANCE_KEY, DEFAULT_GUIDANCE } from '../../src/definition/guidance.js';
import {
  loadTools,
  resolveToolsDir,
  TOOLS_DIR_ENV,
  type ResolvedToolsDir,
} from '../../src/definition/load.js';
import { fixture } from './helpers.js';

const VALID_TOOLS = [
  'cargo_build',
  'cargo_fmt',
  'cargo_fmt_check',
  'cargo_nextest_run',
  'cargo_add',
  'cargo_check-all',
  'ci',
  'date',
  'git_commit',
  'git_add',
  'git_log',
  'release_run',
];

function explicit(dir: string): ResolvedToolsDir {
  return { dir, origin: 'option' };
}

let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'ahma-load-'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('resolveToolsDir', () => {
  const env = { [TOOLS_DIR_ENV]: '/from/env' };

  it('R1.2: --tools-dir wins over AHMA_TOOLS_DIR and the scope default', () => {
    expect(resolveToolsDir({ toolsDir: '/from/option', env, scope: '/scope' })).toEqual({
      dir: resolve('/from/option'),
      origin: 'option',
    });
  });

  it('R1.2: AHMA_TOOLS_DIR is used when no option is given', () => {
    expect(resolveToolsDir({ env, scope: '/scope' })).toEqual({
      dir: resolve('/from/env'),
      origin: 'env',
    });
    expect(resolveToolsDir({ toolsDir: '', env, scope: '/scope' }).origin).toBe('env');
    expect(resolveToolsDir({ toolsDir: undefined, env, scope: '/scope' }).origin).toBe('env');
  });

  it('R1.2: otherwise <scope>/.ahma/tools', () => {
    expect(resolveToolsDir({ scope: '/scope' })).toEqual({
      dir: resolve('/scope/.ahma/tools'),
      origin: 'default',
    });
    expect(resolveToolsDir({ env: { [TOOLS_DIR_ENV]: '' }, scope: '/scope' }).origin).toBe(
      'default',
    );
  });

  it('R1.2: relative directories are made absolute', () => {
    expect(resolveToolsDir({ toolsDir: 'tools', scope: '/scope' }).dir).toBe(resolve('tools'));
    expect(resolveToolsDir({ scope: 'project' }).dir).toBe(resolve('project', '.ahma', 'tools'));
  });
});

describe('loadTools', () => {
  it('R1.1: every JSON definition in the tools directory becomes tools, in a deterministic order', async () => {
    const result = await loadTools({ toolsDir: explicit(fixture('valid')) });
    expect(result.diagnostics).toEqual([]);
    // By definition name (git comes from version-control.json), then leaves in declared order.
    expect(result.tools.map((t) => t.name)).toEqual(VALID_TOOLS);
    expect(result.definitions.map((d) => d.definition.name)).toEqual([
      'cargo',
      'ci',
      'date',
      'git',
      'legacy',
      'release',
    ]);
    const again = await loadTools({ toolsDir: explicit(fixture('valid')) });
    expect(again.tools.map((t) => t.name)).toEqual(VALID_TOOLS);
  });

  it('R1.1: a loaded tool carries its file, leaf, agent-facing description and inputSchema', async () => {
    const { tools, guidance } = await loadTools({ toolsDir: explicit(fixture('valid')) });
    const build = tools.find((t) => t.name === 'cargo_build');
    expect(build?.file).toBe(fixture('valid', 'cargo.json'));
    expect(build?.leaf.subcommandPath).toEqual(['build']);
    expect(build?.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys((build?.inputSchema['properties'] ?? {}) as object)).toContain(
      'manifest-path',
    );
    expect(guidance['cargo_hints']).toBe(
      'Cargo commands share one build lock: start them one at a time.',
    );
    expect(build?.description).toContain('Cargo commands share one build lock');
  });

  it('R2.4: every async tool loaded carries the async guidance in its description; sync tools do not', async () => {
    const { tools } = await loadTools({ toolsDir: explicit(fixture('valid')) });
    const asyncBlock = DEFAULT_GUIDANCE[ASYNC_GUIDANCE_KEY] ?? '';
    for (const tool of tools) {
      expect(tool.description.includes(asyncBlock), tool.name).toBe(!tool.leaf.synchronous);
      expect(tool.description.endsWith(tool.leaf.baseDescription)).toBe(true);
    }
  });

  it('R1.1: disabled tools and disabled definitions are not listed', async () => {
    const { tools } = await loadTools({ toolsDir: explicit(fixture('valid')) });
    const names = tools.map((t) => t.name);
    expect(names).not.toContain('cargo_publish');
    expect(names).not.toContain('legacy_all');
  });

  it('R5.2: one invalid file is rejected with file, pointer and hint; the others still load', async () => {
    await cp(fixture('valid'), scratch, { recursive: true });
    await cp(fixture('broken', 'unknown-key.json'), join(scratch, 'unknown-key.json'));
    const result = await loadTools({ toolsDir: explicit(scratch) });
    expect(result.tools.map((t) => t.name)).toEqual(VALID_TOOLS);
    expect(result.diagnostics).toEqual([
      {
        file: join(scratch, 'unknown-key.json'),
        pointer: '/subcommand/0/timeout_secnds',
        message: 'unknown key "timeout_secnds"',
        hint: 'did you mean "timeout_seconds"?',
        severity: 'error',
      },
    ]);
  });

  it('R5.2: a definition failing a cross-file check is rejected alone; one with a warning loads', async () => {
    await cp(fixture('valid'), scratch, { recursive: true });
    await cp(fixture('broken', 'sequence-missing-tool.json'), join(scratch, 'seq.json'));
    await cp(fixture('warnings', 'unknown-guidance-key.json'), join(scratch, 'guided.json'));
    const result = await loadTools({ toolsDir: explicit(scratch) });
    // By definition name: "guidance" loads between "git" and "release".
    const release = VALID_TOOLS.indexOf('release_run');
    expect(result.tools.map((t) => t.name)).toEqual([
      ...VALID_TOOLS.slice(0, release),
      'guidance',
      ...VALID_TOOLS.slice(release),
    ]);
    expect(result.diagnostics.map((d) => [d.file, d.pointer, d.severity])).toEqual([
      [join(scratch, 'guided.json'), '/guidance_key', 'warning'],
      [join(scratch, 'seq.json'), '/sequence/0/tool', 'error'],
    ]);
  });

  it('R5.2: an unreadable file is reported and the others still load', async () => {
    await cp(fixture('valid', 'date.json'), join(scratch, 'date.json'));
    await mkdir(join(scratch, 'folder.json'));
    const result = await loadTools({ toolsDir: explicit(scratch) });
    expect(result.tools.map((t) => t.name)).toEqual(['date']);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({
      file: join(scratch, 'folder.json'),
      pointer: '',
    });
  });

  it('R1.3: adding, changing or removing a JSON file changes the tools, with no code change', async () => {
    const file = join(scratch, 'hello.json');
    const toolsDir = explicit(scratch);
    expect((await loadTools({ toolsDir })).tools).toEqual([]);
    await writeFile(
      file,
      JSON.stringify({ name: 'hello', description: 'Say hello.', command: 'echo hello' }),
    );
    const added = await loadTools({ toolsDir });
    expect(added.tools.map((t) => [t.name, t.leaf.command])).toEqual([
      ['hello', ['echo', 'hello']],
    ]);
    await writeFile(
      file,
      JSON.stringify({
        name: 'hello',
        description: 'Say hello.',
        command: 'echo',
        subcommand: [{ name: 'world', description: 'Say hello world.' }],
      }),
    );
    expect((await loadTools({ toolsDir })).tools.map((t) => t.name)).toEqual(['hello_world']);
    await rm(file);
    expect((await loadTools({ toolsDir })).tools).toEqual([]);
  });

  it('R1.2: a missing default directory is simply empty', async () => {
    const result = await loadTools({ toolsDir: resolveToolsDir({ scope: scratch }) });
    expect(result).toMatchObject({ tools: [], definitions: [], diagnostics: [] });
  });

  it.each(['option', 'env'] as const)(
    'R1.2: a missing directory named by %s is a diagnostic',
    async (origin) => {
      const dir = join(scratch, 'nope');
      const result = await loadTools({ toolsDir: { dir, origin } });
      expect(result.tools).toEqual([]);
      expect(result.diagnostics).toEqual([
        {
          file: dir,
          pointer: '',
          message: 'tools directory does not exist',
          hint: 'create it or point --tools-dir / AHMA_TOOLS_DIR elsewhere',
          severity: 'error',
        },
      ]);
    },
  );

  it('R1.2: the default directory <scope>/.ahma/tools is loaded when present', async () => {
    const dir = join(scratch, '.ahma', 'tools');
    await mkdir(dir, { recursive: true });
    await cp(fixture('valid', 'date.json'), join(dir, 'date.json'));
    const result = await loadTools({ toolsDir: resolveToolsDir({ scope: scratch, env: {} }) });
    expect(result.tools.map((t) => t.name)).toEqual(['date']);
  });
});

describe('bundled catalog', () => {
  const catalogDir = fixture('catalog');

  it('R1.2: bundled definitions are enabled by name; the others stay off', async () => {
    const result = await loadTools({
      toolsDir: resolveToolsDir({ scope: scratch }),
      catalogDir,
      bundled: ['rg', 'jq'],
    });
    expect(result.diagnostics).toEqual([]);
    expect(result.tools.map((t) => [t.name, t.file])).toEqual([
      ['jq', join(catalogDir, 'jq.json')],
      ['rg', join(catalogDir, 'rg.json')],
    ]);
    // The catalog's own guidance file serves its definitions.
    expect(result.tools[0]?.description).toContain('Quote filters as one argument');
  });

  it('R1.2: no bundled tool is enabled unless named', async () => {
    const result = await loadTools({ toolsDir: resolveToolsDir({ scope: scratch }), catalogDir });
    expect(result.tools).toEqual([]);
  });

  it('R1.2: a local file with the same name overrides the bundled definition', async () => {
    const result = await loadTools({
      toolsDir: explicit(fixture('valid')),
      catalogDir,
      bundled: ['cargo', 'rg'],
    });
    expect(result.diagnostics).toEqual([]);
    const cargoTools = result.tools.filter((t) => t.leaf.definitionName === 'cargo');
    expect(cargoTools.map((t) => t.name)).toEqual(
      VALID_TOOLS.filter((name) => name.startsWith('cargo_')),
    );
    for (const tool of cargoTools) expect(tool.file).toBe(fixture('valid', 'cargo.json'));
    expect(result.tools.find((t) => t.name === 'cargo_build')?.description).not.toContain(
      '(bundled)',
    );
    expect(result.tools.map((t) => t.name)).toContain('rg');
  });

  it('R1.2: an unknown bundled name is a diagnostic listing the bundled tools', async () => {
    const result = await loadTools({
      toolsDir: resolveToolsDir({ scope: scratch }),
      catalogDir,
      bundled: ['rg', 'nope'],
    });
    expect(result.tools.map((t) => t.name)).toEqual(['rg']);
    expect(result.diagnostics).toEqual([
      {
        file: join(catalogDir, 'nope.json'),
        pointer: '',
        message: 'no bundled tool named "nope"',
        hint: 'bundled tools: cargo, jq, rg',
        severity: 'error',
      },
    ]);
  });

  it('R1.2: bundled tools requested without a catalog directory are a diagnostic', async () => {
    const result = await loadTools({
      toolsDir: resolveToolsDir({ scope: scratch }),
      bundled: ['rg'],
    });
    expect(result.tools).toEqual([]);
    expect(result.diagnostics.map((d) => d.message)).toEqual([
      'bundled tools were requested but no catalog directory is known',
    ]);
  });

  it('R1.2: a local sequence may call a bundled tool', async () => {
    await writeFile(
      join(scratch, 'search.json'),
      JSON.stringify({
        name: 'search',
        description: 'Search for TODO.',
        command: 'sequence',
        sequence: [{ tool: 'rg', args: { pattern: 'TODO' } }],
      }),
    );
    const result = await loadTools({ toolsDir: explicit(scratch), catalogDir, bundled: ['rg'] });
    expect(result.diagnostics).toEqual([]);
    expect(result.tools.map((t) => t.name)).toEqual(['rg', 'search']);
  });
});
