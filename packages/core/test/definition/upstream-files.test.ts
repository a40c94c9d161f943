// SPEC §2 Compatibility: the Rust ahma's own tool files (test/fixtures/upstream-ahma, copied
// unmodified; see its README for each file's repository and commit) load with no error.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/argv/prepare.js';
import { isError } from '../../src/definition/diagnostic.js';
import { loadTools, type LoadedTool } from '../../src/definition/load.js';
import { fixture, validateOne } from './helpers.js';

const DIR = fixture('upstream-ahma');
const FILES = readdirSync(DIR).filter((name) => name.endsWith('.json'));

describe('SPEC §2 compat: upstream ahma tool files', () => {
  it('SPEC §2 compat: the fixture folder holds every collected upstream file', () => {
    expect(FILES.sort()).toEqual([
      'android-logcat.json',
      'file-tools.json',
      'gh.json',
      'git.json',
      'kotlin.json',
      'python.json',
      'rust-log-monitor.json',
      'rust.json',
      'simplify.json',
    ]);
  });

  for (const name of FILES) {
    it(`SPEC §2 compat, R5.2: ${name} validates with no error (warnings allowed)`, async () => {
      const diagnostics = await validateOne(fixture('upstream-ahma', name));
      expect(diagnostics.filter(isError)).toEqual([]);
    });
  }

  describe('their tools', () => {
    let tools: Map<string, LoadedTool> | undefined;
    const tool = async (name: string): Promise<LoadedTool> => {
      tools ??= new Map(
        (await loadTools({ toolsDir: { dir: DIR, origin: 'option' } })).tools.map((t) => [
          t.name,
          t,
        ]),
      );
      const found = tools.get(name);
      if (found === undefined) throw new Error(`no tool ${name}`);
      return found;
    };

    it('SPEC §2 compat: file-tools (command "/bin/sh") runs ls with argv, its working_directory never passed', async () => {
      const ls = await tool('file-tools_ls');
      expect(ls.leaf.command).toEqual([]);
      const prepared = await prepareInvocation(
        ls.leaf,
        { long: true, path: '.', working_directory: '.' },
        { scope: DIR },
      );
      expect(prepared.argv).toEqual(['ls', '-l', DIR.replace(/\/$/, '')]);
    });

    it('SPEC §2 compat: gh\'s flat "pr_create" subcommand is the tool gh_pr_create', async () => {
      const created = await tool('gh_pr_create');
      expect(created.leaf.subcommandPath).toEqual(['pr_create']);
    });

    it("SPEC §2 compat: git's hints reach every git tool's description", async () => {
      expect((await tool('git_status')).description).toMatch(
        /Hints:\n- default: Use --tool_args -- to forward raw git flags/,
      );
    });

    it("SPEC §2 compat: cargo's sequences resolve, and its subcommand probes run as declared", async () => {
      const diagnose = await tool('cargo_diagnose');
      expect(diagnose.leaf.sequence?.map((step) => step.subcommand)).toEqual(['check']);
    });
  });
});
