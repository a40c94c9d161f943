// R1.2, R5.1, R2.5: the bundled catalog in tools/ loads by name the way `--tools a,b` selects it,
// passes every check, and follows the catalog's rules (real argv programs, checked paths, message
// files, synchronous manifest editors, availability checks).
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkAvailability, loadTools, validateToolFiles } from '../../src/index.js';
import { splitCommand } from '../../src/definition/flatten.js';
import { type ArgumentDefinition } from '../../src/definition/schema.js';
import { engineFixture } from '../support/engine.js';
import {
  catalog,
  CATALOG_DIR,
  CATALOG_NAMES,
  installed,
  loadCatalog,
  type Catalog,
} from './helpers.js';

/** Descriptions longer than this are cut by some clients (SPEC §2: clients cap at about 2 KB). */
const DESCRIPTION_CAP = 2048;

/** R2.5: tools that edit a project manifest or lock file. */
const MANIFEST_EDITORS = [
  'cargo_add',
  'cargo_remove',
  'cargo_update',
  'cargo_new',
  'cargo_init',
  'npm_install',
  'npm_uninstall',
  'npm_update',
  'npm_audit_fix',
  'npm_init',
  'npm_pkg_set',
  'npm_pkg_delete',
  'npm_version',
  'pnpm_add',
  'pnpm_remove',
  'pnpm_update',
  'pnpm_audit',
  'pnpm_init',
];

/** Builds, test runs, installs and network transfers: the agent should not sit waiting on them. */
const LONG_RUNNING = [
  'cargo_build',
  'cargo_check',
  'cargo_test',
  'cargo_clippy',
  'cargo_run',
  'cargo_doc',
  'npm_ci',
  'npm_run',
  'npm_test',
  'npm_exec',
  'pnpm_install',
  'pnpm_run',
  'pnpm_test',
  'pnpm_exec',
  'pnpm_dlx',
  'git_clone',
  'git_fetch',
  'git_pull',
  'git_push',
  'gh_pr_checks',
  'gh_run_watch',
  'gh_repo_clone',
  'python',
];

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish', 'csh', 'tcsh']);

/** Argument names that denote a file or directory in this catalog. */
const PATH_NAMES = new Set([
  'path',
  'paths',
  'file',
  'directory',
  'source',
  'destination',
  'from',
  'to',
  'script',
  'manifest-path',
  'pack-destination',
  '-newer',
]);

/** Arguments whose name suggests a path but whose value is not one. */
const NOT_PATHS = new Set([
  'git_restore.source', // a commit
  'npm_run.script', // a package.json script name
  'pnpm_run.script',
]);

const isPath = (argument: ArgumentDefinition) =>
  argument.format === 'path' || argument.items?.format === 'path';

let loaded: Catalog;
beforeAll(async () => {
  loaded = await catalog();
});

describe('loading the catalog by name (--tools)', () => {
  it('R1.2: tools/ holds one file per catalog definition, named after the definition', () => {
    const files = readdirSync(CATALOG_DIR)
      .filter((name) => name.endsWith('.json'))
      .sort();
    expect(files).toEqual(CATALOG_NAMES.map((name) => `${name}.json`));
    expect(loaded.result.definitions.map((entry) => entry.definition.name)).toEqual([
      ...CATALOG_NAMES,
    ]);
    for (const entry of loaded.result.definitions) {
      expect(entry.file).toBe(join(CATALOG_DIR, `${entry.definition.name}.json`));
    }
  });

  it.each(CATALOG_NAMES)(
    'R1.2: --tools %s loads that definition alone, without diagnostics',
    async (name) => {
      const result = await loadCatalog([name]);
      expect(result.diagnostics).toEqual([]);
      expect(result.definitions.map((entry) => entry.definition.name)).toEqual([name]);
      expect(result.tools.length).toBeGreaterThan(0);
      for (const tool of result.tools) expect(tool.leaf.definitionName).toBe(name);
    },
  );

  it('R1.2: --tools git,cargo enables exactly those two definitions', async () => {
    const result = await loadCatalog(['git', 'cargo']);
    expect(result.diagnostics).toEqual([]);
    expect(new Set(result.tools.map((tool) => tool.leaf.definitionName))).toEqual(
      new Set(['cargo', 'git']),
    );
    expect(result.tools.map((tool) => tool.name)).toContain('cargo_qualitycheck');
    expect(result.tools.map((tool) => tool.name)).toContain('git_commit');
  });

  it('R1.2: an unknown name is reported with the names of every bundled definition', async () => {
    const result = await loadCatalog(['git', 'gti']);
    expect(result.definitions.map((entry) => entry.definition.name)).toEqual(['git']);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]?.message).toBe('no bundled tool named "gti"');
    expect(result.diagnostics[0]?.hint).toBe(`bundled tools: ${CATALOG_NAMES.join(', ')}`);
  });

  describe('with a local tools directory', () => {
    let local: string;
    beforeEach(async () => {
      local = await mkdtemp(join(tmpdir(), 'ahma-catalog-local-'));
    });
    afterEach(async () => {
      await rm(local, { recursive: true, force: true });
    });

    it('R1.2: a local file with the same name overrides the bundled definition', async () => {
      await writeFile(
        join(local, 'my-git.json'),
        JSON.stringify({
          name: 'git',
          description: 'Only what this project allows.',
          command: 'git',
          synchronous: true,
          subcommand: [{ name: 'status', description: 'Show the status.' }],
        }),
      );
      const result = await loadTools({
        toolsDir: { dir: local, origin: 'option' },
        catalogDir: CATALOG_DIR,
        bundled: ['git', 'cargo'],
      });
      expect(result.diagnostics).toEqual([]);
      const gitTools = result.tools.filter((tool) => tool.leaf.definitionName === 'git');
      expect(gitTools.map((tool) => [tool.name, tool.file])).toEqual([
        ['git_status', join(local, 'my-git.json')],
      ]);
      expect(result.tools.some((tool) => tool.name === 'cargo_qualitycheck')).toBe(true);
    });
  });
});

describe('the catalog files', () => {
  it('R5.1: every file passes ahma-validate: schema, semantic and cross-file checks', async () => {
    const report = await validateToolFiles([CATALOG_DIR]);
    expect(report.files.map((file) => file.file)).toEqual(
      CATALOG_NAMES.map((name) => join(CATALOG_DIR, `${name}.json`)),
    );
    for (const file of report.files) expect(file.diagnostics, file.file).toEqual([]);
  });

  it('SPEC §2: every definition has an availability check of its own program and install instructions', () => {
    for (const { definition } of loaded.result.definitions) {
      const program = splitCommand(definition.command)[0];
      expect(definition.availability_check?.command, definition.name).toBe(program);
      expect(definition.availability_check?.args?.length, definition.name).toBeGreaterThan(0);
      expect(definition.install_instructions?.length ?? 0, definition.name).toBeGreaterThan(40);
    }
  });

  it('SPEC §2: each availability probe, run confined as the server runs it, finds its program exactly when it is installed', async () => {
    const fixture = await engineFixture();
    try {
      const report = await checkAvailability(loaded.result, { executor: fixture.engine.executor });
      const found = Object.fromEntries(report.checks.map((c) => [c.definitionName, c.available]));
      // Whether each program runs here at all, asked directly and unconfined.
      const expected = Object.fromEntries(
        loaded.result.definitions.map(({ definition }) => {
          const program = splitCommand(definition.command)[0] ?? '';
          return [definition.name, program === 'env' ? installed('ls', ['.']) : installed(program)];
        }),
      );
      expect(found).toEqual(expected);
      expect(report.checks).toHaveLength(CATALOG_NAMES.length);
    } finally {
      await fixture.dispose();
    }
  });

  it('R2.5: tools that edit a project manifest or lock file are synchronous', () => {
    for (const name of MANIFEST_EDITORS)
      expect(loaded.tool(name).leaf.synchronous, name).toBe(true);
  });

  it('R2.1: builds, test runs, installs and network transfers are asynchronous', () => {
    for (const name of LONG_RUNNING) expect(loaded.tool(name).leaf.synchronous, name).toBe(false);
  });

  it('R2.4: every tool has a description that, guidance included, fits the ~2 KB clients show', () => {
    for (const tool of loaded.tools) {
      expect(tool.leaf.baseDescription.length, tool.name).toBeGreaterThan(10);
      expect(Buffer.byteLength(tool.description), tool.name).toBeLessThanOrEqual(DESCRIPTION_CAP);
    }
  });

  it('SPEC §2: every parameter is described for the agent', () => {
    for (const tool of loaded.tools) {
      for (const argument of [...tool.leaf.options, ...tool.leaf.positionals]) {
        expect(argument.description?.length ?? 0, `${tool.name}.${argument.name}`).toBeGreaterThan(
          3,
        );
      }
    }
  });

  it('SPEC §2: no tool runs through a shell: every command is an argv program', () => {
    for (const tool of loaded.tools) {
      const program = tool.leaf.sequence === undefined ? tool.leaf.command[0] : 'sequence';
      expect(SHELLS.has(program ?? ''), tool.name).toBe(false);
    }
    // The file tools run each program directly: env execs its first argument, no shell between.
    const fileTools = loaded.tools.filter((tool) => tool.leaf.definitionName === 'file-tools');
    expect(fileTools.map((tool) => [...tool.leaf.command, ...tool.leaf.subcommandPath])).toEqual(
      [
        'ls',
        'cat',
        'head',
        'tail',
        'grep',
        'find',
        'mkdir',
        'mv',
        'cp',
        'rm',
        'touch',
        'diff',
        'wc',
      ].map((program) => ['env', program]),
    );
  });

  it('SPEC §2: file and directory arguments are format "path", so they are checked against the scope', () => {
    let count = 0;
    const wrong: string[] = [];
    for (const tool of loaded.tools) {
      for (const argument of [...tool.leaf.options, ...tool.leaf.positionals]) {
        // A boolean of that name is a switch (ls -d, --directory), not a path.
        if (!PATH_NAMES.has(argument.name) || argument.type === 'boolean') continue;
        const id = `${tool.name}.${argument.name}`;
        count += 1;
        if (isPath(argument) === NOT_PATHS.has(id)) wrong.push(id);
      }
    }
    expect(wrong).toEqual([]);
    expect(count).toBeGreaterThan(40);
  });

  it("SPEC §2: git commit's message goes through a temporary file (git commit -F <file>)", () => {
    const message = loaded.tool('git_commit').leaf.options.find((o) => o.name === 'message');
    expect(message).toMatchObject({ type: 'string', file_arg: true, file_flag: '-F' });
  });
});
