// import_config and export_config (FR4.7, FR4.8, EC7): instant-mcp's export and state file import
// as they are; duplicates are skipped unless overwrite; every entry's failure is reported without
// stopping the others; export writes YAML inside the scope only, and reads back to the same commands.
import { copyFile, mkdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand, type RegisteredCommand } from '../../src/registry/command.js';
import { DEFAULT_EXPORT_PATH, exportConfig, importConfig } from '../../src/registry/config-file.js';
import { RegistryDraft, type DraftRules } from '../../src/registry/draft.js';
import { commandEntries } from '../../src/registry/registry-file.js';
import {
  caseDirs,
  INSTANT_MCP,
  INSTANT_MCP_STATE,
  openRegistry,
  refusal,
  registryFile,
  rules,
  writeExecutable,
} from './helpers.js';

const cases = caseDirs('config-file');

/** A fresh scope holding instant-mcp's script (./scripts/greet.sh) and ./tool.sh. */
async function newScope(): Promise<string> {
  const scope = await cases.scope();
  await writeExecutable(join(scope, 'scripts', 'greet.sh'));
  return scope;
}

function draftIn(
  scope: string,
  commands: Record<string, unknown> = {},
  overrides: Partial<DraftRules> = {},
): RegistryDraft {
  return new RegistryDraft(commandEntries(commands), rules(scope, overrides));
}

const commandsOf = (draft: RegistryDraft): Record<string, unknown> =>
  Object.fromEntries(
    [...draft.entries].map(([name, entry]) => [
      name,
      entry.kind === 'command' ? entry.command : entry,
    ]),
  );

describe("importConfig: instant-mcp's files", () => {
  it("FR4.7: instant-mcp's YAML export imports unmodified: every command, its unset fields dropped", async () => {
    const scope = await newScope();
    const draft = draftIn(scope);
    const report = await importConfig(draft, {
      path: join(INSTANT_MCP, 'commands.yaml'),
      overwrite: false,
      scope,
    });
    expect(report).toEqual({
      path: join(INSTANT_MCP, 'commands.yaml'),
      imported: ['count_lines', 'greet', 'lint'],
      skipped: [],
      errors: [],
    });
    expect(commandsOf(draft)).toEqual({
      ...INSTANT_MCP_STATE,
      // `args: {}`, `description: ""` and `async: false` are how instant-mcp writes "unset".
      lint: { name: 'lint', exec: './scripts/greet.sh', timeout: '120s' },
    });
    expect(Object.keys((commandsOf(draft)['count_lines'] as RegisteredCommand).args ?? {})).toEqual(
      ['file', 'mode'],
    );
  });

  it("FR4.7: instant-mcp's state.json (JSON, with a version) imports unmodified", async () => {
    const scope = await newScope();
    const draft = draftIn(scope);
    const report = await importConfig(draft, {
      path: join(INSTANT_MCP, 'state.json'),
      overwrite: false,
      scope,
    });
    expect(report.imported).toEqual(['count_lines', 'greet']);
    expect(report.errors).toEqual([]);
    const state = JSON.parse(await readFile(join(INSTANT_MCP, 'state.json'), 'utf8')) as {
      commands: Record<string, unknown>;
    };
    expect(commandsOf(draft)).toEqual(state.commands);
  });

  it('FR4.7: both files import to the same commands, but for the export\'s extra "lint"', async () => {
    const scope = await newScope();
    const fromYaml = draftIn(scope);
    const fromJson = draftIn(scope);
    await importConfig(fromYaml, {
      path: join(INSTANT_MCP, 'commands.yaml'),
      overwrite: false,
      scope,
    });
    await importConfig(fromJson, {
      path: join(INSTANT_MCP, 'state.json'),
      overwrite: false,
      scope,
    });
    const yaml = commandsOf(fromYaml);
    delete yaml['lint'];
    expect(yaml).toEqual(commandsOf(fromJson));
  });

  it('FR4.7: an import through the registry is persisted, in one write', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    let writes = 0;
    registry.onChange(() => writes++);
    const report = await registry.change((draft) =>
      importConfig(draft, { path: join(INSTANT_MCP, 'commands.yaml'), overwrite: false, scope }),
    );
    expect(report.imported).toHaveLength(3);
    expect(writes).toBe(1);
    const reopened = await openRegistry(scope);
    expect(reopened.commands.map((c) => c.name)).toEqual(['count_lines', 'greet', 'lint']);
  });
});

describe('importConfig: duplicates, counts and errors', () => {
  it('FR4.7: a name already registered is skipped, unless overwrite replaces it', async () => {
    const scope = await newScope();
    const existing = { greet: { exec: './tool.sh', description: 'mine' } };
    const options = { path: join(INSTANT_MCP, 'state.json'), scope };

    const kept = draftIn(scope, existing);
    const skipped = await importConfig(kept, { ...options, overwrite: false });
    expect(skipped.imported).toEqual(['count_lines']);
    expect(skipped.skipped).toEqual(['greet']);
    expect(kept.entries.get('greet')).toMatchObject({ command: { description: 'mine' } });

    const replaced = draftIn(scope, existing);
    const overwritten = await importConfig(replaced, { ...options, overwrite: true });
    expect(overwritten.imported).toEqual(['count_lines', 'greet']);
    expect(overwritten.skipped).toEqual([]);
    expect(replaced.entries.get('greet')).toMatchObject({
      command: { description: 'Greet someone' },
    });
  });

  it('FR4.7: an invalid registered entry of that name is skipped too, or repaired by overwrite', async () => {
    const scope = await newScope();
    const existing = { greet: { exec: './tool.sh', timeout: 'broken' } };
    const options = { path: join(INSTANT_MCP, 'state.json'), scope };
    expect(
      (await importConfig(draftIn(scope, existing), { ...options, overwrite: false })).skipped,
    ).toEqual(['greet']);
    const draft = draftIn(scope, existing);
    await importConfig(draft, { ...options, overwrite: true });
    expect(draft.entries.get('greet')?.kind).toBe('command');
  });

  it('EC7: each entry that fails is reported with its code and message; the others are imported', async () => {
    const scope = await newScope();
    const file = join(scope, 'mixed.yaml');
    await writeFile(
      file,
      [
        'commands:',
        '  good:',
        '    exec: ./tool.sh',
        '  bad_timeout:',
        '    exec: ./tool.sh',
        '    timeout: forever',
        '  renamed:',
        '    name: other',
        '    exec: ./tool.sh',
        '  "bad-name":',
        '    exec: ./tool.sh',
        '  missing_exec:',
        '    exec: ./nowhere.sh',
        '  help:',
        '    exec: ./tool.sh',
        '  also_good:',
        '    exec: wc',
        '    description: counts',
        '',
      ].join('\n'),
    );
    const draft = draftIn(
      scope,
      {},
      {
        nameTaken: (name) => (name === 'help' ? 'a built-in tool' : undefined),
      },
    );
    const report = await importConfig(draft, { path: 'mixed.yaml', overwrite: false, scope });
    expect(report.imported).toEqual(['good', 'also_good']);
    expect(report.skipped).toEqual([]);
    expect(report.errors.map((e) => [e.name, e.code])).toEqual([
      ['bad_timeout', 'COMMAND_INVALID'],
      ['renamed', 'COMMAND_INVALID'],
      ['bad-name', 'COMMAND_INVALID'],
      ['missing_exec', 'EXEC_NOT_FOUND'],
      ['help', 'COMMAND_EXISTS'],
    ]);
    expect(report.errors[0]?.message).toContain('timeout "forever" is not a duration');
    expect(report.errors[1]?.message).toBe('its key "renamed" differs from its name "other"');
    expect(report.errors[3]?.message).toContain('./nowhere.sh');
    expect(report.errors[4]?.message).toBe('"help" is already a built-in tool; pick another name');
    expect([...draft.entries.keys()]).toEqual(['good', 'also_good']);
  });

  it('EC7: a "__proto__" key is reported as an invalid entry, never merged into a prototype', async () => {
    const scope = await newScope();
    await writeFile(
      join(scope, 'proto.yaml'),
      'commands:\n  __proto__:\n    exec: wc\n    polluted: true\n  ok:\n    exec: wc\n',
    );
    const draft = draftIn(scope);
    const report = await importConfig(draft, { path: 'proto.yaml', overwrite: false, scope });
    expect(report.imported).toEqual(['ok']);
    expect(report.errors.map((e) => [e.name, e.code])).toEqual([['__proto__', 'COMMAND_INVALID']]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect([...draft.entries.keys()]).toEqual(['ok']);
  });

  it('FR4.7: a relative path is relative to the scope; a file outside the scope may be read', async () => {
    const scope = await newScope();
    await mkdir(join(scope, 'config'));
    await copyFile(join(INSTANT_MCP, 'state.json'), join(scope, 'config', 'state.json'));
    const report = await importConfig(draftIn(scope), {
      path: 'config/state.json',
      overwrite: false,
      scope,
    });
    expect(report.path).toBe(join(scope, 'config', 'state.json'));
    expect(report.imported).toEqual(['count_lines', 'greet']);
    // The fixture itself lies outside the scope.
    expect(
      (
        await importConfig(draftIn(scope), {
          path: join(INSTANT_MCP, 'state.json'),
          overwrite: false,
          scope,
        })
      ).imported,
    ).toHaveLength(2);
  });

  it('FR4.7: plain JSON with a "commands" map imports, and an empty map imports nothing', async () => {
    const scope = await newScope();
    await writeFile(join(scope, 'c.json'), '{"commands": {"j": {"exec": "wc"}}}');
    await writeFile(join(scope, 'empty.yaml'), 'commands: {}\n');
    expect(
      (await importConfig(draftIn(scope), { path: 'c.json', overwrite: false, scope })).imported,
    ).toEqual(['j']);
    const draft = draftIn(scope);
    expect(
      await importConfig(draft, { path: 'empty.yaml', overwrite: false, scope }),
    ).toMatchObject({
      imported: [],
      skipped: [],
      errors: [],
    });
    expect(draft.changed).toBe(false);
  });
});

describe('importConfig: files that are not commands files', () => {
  it('FR4.7: a missing file, a directory, or a file over 8 MiB is CONFIG_INVALID', async () => {
    const scope = await newScope();
    await refusal(
      importConfig(draftIn(scope), { path: 'missing.yaml', overwrite: false, scope }),
      'CONFIG_INVALID',
      `cannot read ${join(scope, 'missing.yaml')}`,
    );
    await refusal(
      importConfig(draftIn(scope), { path: 'scripts', overwrite: false, scope }),
      'CONFIG_INVALID',
      'not a regular file',
    );
    const big = join(scope, 'big.yaml');
    await writeFile(big, '');
    await truncate(big, 8 * 1024 * 1024 + 1);
    await refusal(
      importConfig(draftIn(scope), { path: 'big.yaml', overwrite: false, scope }),
      'CONFIG_INVALID',
      'larger than 8388608 bytes',
    );
  });

  it("FR4.7: a YAML syntax error says where, but never quotes the file's content", async () => {
    const scope = await newScope();
    await writeFile(
      join(scope, 'bad.yaml'),
      'commands:\n  a: [1, 2\n  secret_token: hunter2-s3cr3t\n',
    );
    const error = await refusal(
      importConfig(draftIn(scope), { path: 'bad.yaml', overwrite: false, scope }),
      'CONFIG_INVALID',
    );
    expect(error.message).toMatch(
      /^bad\.yaml is not YAML or JSON \(line \d+, column \d+: [A-Z_]+\)$/,
    );
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('secret_token');
  });

  it("FR4.7: a duplicate key is a syntax error too, again without the file's content", async () => {
    const scope = await newScope();
    await writeFile(join(scope, 'dup.yaml'), 'commands:\n  a: {exec: wc}\n  a: {exec: hunter2}\n');
    const error = await refusal(
      importConfig(draftIn(scope), { path: 'dup.yaml', overwrite: false, scope }),
      'CONFIG_INVALID',
      'DUPLICATE_KEY',
    );
    expect(error.message).not.toContain('hunter2');
  });

  it('FR4.7: a file without a "commands" map is CONFIG_INVALID, saying what is expected', async () => {
    const scope = await newScope();
    const cases = {
      'none.yaml': 'version: "1.0"\n',
      'list.yaml': 'commands:\n  - exec: wc\n',
      'scalar.yaml': 'commands: wc\n',
      'null.yaml': 'commands:\n',
      'empty.yaml': '',
      'top-list.json': '[{"commands": {}}]',
    };
    for (const [name, text] of Object.entries(cases)) {
      await writeFile(join(scope, name), text);
      const error = await refusal(
        importConfig(draftIn(scope), { path: name, overwrite: false, scope }),
        'CONFIG_INVALID',
      );
      expect(error.message).toBe(
        `${name} has no "commands" map ({"commands": {"name": {"exec": …}}}, as export_config writes)`,
      );
    }
  });
});

describe('exportConfig', () => {
  const commands = (): RegisteredCommand[] =>
    [
      {
        name: 'count_lines',
        exec: 'wc',
        args: {
          // Declared out of alphabetical order: the order is kept.
          zfile: { type: 'string', description: 'File', required: true, format: 'path' },
          lines: { type: 'boolean', flag: '-l', description: 'Lines only' },
          amax: { type: 'integer', flag: '--max' },
          ratio: { type: 'number' },
        },
        description: 'Count lines, words and bytes',
        async: true,
        timeout: '1h30m',
      },
      { name: 'bare', exec: './tool.sh' },
      {
        name: 'tricky',
        exec: './scripts/greet.sh',
        description: 'true',
        args: { a: { type: 'string', description: '- a: b # c\nsecond line' } },
        timeout: '30s',
      },
    ].map(parseCommand);

  it('FR4.8: writes YAML to .ahma/commands.yaml in the scope by default, with a header saying how to import it', async () => {
    const scope = await newScope();
    const path = await exportConfig(commands(), {
      path: undefined,
      scope,
      registryFile: registryFile(scope),
    });
    expect(DEFAULT_EXPORT_PATH).toBe('.ahma/commands.yaml');
    expect(path).toBe(join(scope, '.ahma', 'commands.yaml'));
    const text = await readFile(path, 'utf8');
    expect(
      text.startsWith(
        '# Ahma registered commands, written by export_config.\n# Load them with import_config {"path": ".ahma/commands.yaml"}.\ncommands:\n  count_lines:\n',
      ),
    ).toBe(true);
  });

  it('FR4.8: export → import gives back every field: flag, format, async, timeout, description, args order', async () => {
    const scope = await newScope();
    await exportConfig(commands(), {
      path: 'out/commands.yaml',
      scope,
      registryFile: registryFile(scope),
    });
    const draft = draftIn(scope);
    const report = await importConfig(draft, {
      path: 'out/commands.yaml',
      overwrite: false,
      scope,
    });
    expect(report.errors).toEqual([]);
    expect(report.imported).toEqual(['count_lines', 'bare', 'tricky']);
    const back = [...draft.entries.values()].map((entry) =>
      entry.kind === 'command' ? entry.command : undefined,
    );
    expect(back).toEqual(commands());
    expect(Object.keys(back[0]?.args ?? {})).toEqual(['zfile', 'lines', 'amax', 'ratio']);
  });

  it('FR4.8: names and values YAML would read as other types come back as the same strings', async () => {
    const scope = await newScope();
    const odd = ['true', 'null', '1e3', '0x1F', 'yes', 'No', '_', '0_1'].map((name) =>
      parseCommand({ name, exec: 'wc', description: name, timeout: '30s' }),
    );
    await exportConfig(odd, { path: undefined, scope, registryFile: registryFile(scope) });
    const draft = draftIn(scope);
    const report = await importConfig(draft, {
      path: DEFAULT_EXPORT_PATH,
      overwrite: false,
      scope,
    });
    expect(report.errors).toEqual([]);
    expect([...report.imported].sort()).toEqual(odd.map((c) => c.name).sort());
    for (const command of odd) {
      expect(draft.entries.get(command.name)).toEqual({ kind: 'command', command });
    }
  });

  it('FR4.8: an export of nothing is an empty commands map, which imports as nothing', async () => {
    const scope = await newScope();
    await exportConfig([], { path: 'none.yaml', scope, registryFile: registryFile(scope) });
    expect(await readFile(join(scope, 'none.yaml'), 'utf8')).toContain('commands: {}');
    expect(
      (await importConfig(draftIn(scope), { path: 'none.yaml', overwrite: false, scope })).imported,
    ).toEqual([]);
  });

  it('FR4.8: an export path outside the scope is refused (PATH_OUTSIDE_SCOPE), and nothing is written', async () => {
    const scope = await newScope();
    const outside = await cases.dir();
    await symlink(outside, join(scope, 'escape'));
    for (const path of ['../x.yaml', join(outside, 'x.yaml'), 'escape/x.yaml', '/etc/ahma.yaml']) {
      await refusal(
        exportConfig(commands(), { path, scope, registryFile: registryFile(scope) }),
        'PATH_OUTSIDE_SCOPE',
      );
    }
    await expect(readFile(join(outside, 'x.yaml'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('FR4.8: an absolute path inside the scope is accepted', async () => {
    const scope = await newScope();
    const target = join(scope, 'abs.yaml');
    await expect(
      exportConfig(commands(), { path: target, scope, registryFile: registryFile(scope) }),
    ).resolves.toBe(target);
  });

  it('FR4.8: a path that cannot be written (a directory is there) is CONFIG_INVALID', async () => {
    const scope = await newScope();
    await refusal(
      exportConfig(commands(), { path: 'scripts', scope, registryFile: registryFile(scope) }),
      'CONFIG_INVALID',
      `cannot write ${join(scope, 'scripts')}`,
    );
  });

  it('FR4.8: the header stays a comment whatever the path holds (quotes, a newline), so the file imports', async () => {
    const scope = await newScope();
    for (const path of [
      'we"ird.yaml',
      'two\nlines.yaml',
      'cr\rlf.yaml',
      'sep\u2028\u0085.yaml',
      'hash # and: colon.yaml',
    ]) {
      await exportConfig(commands(), { path, scope, registryFile: registryFile(scope) });
      const text = await readFile(join(scope, path), 'utf8');
      const [first = '', second = ''] = text.split('\n');
      expect(first.startsWith('#')).toBe(true);
      expect(second.startsWith('#')).toBe(true);
      expect(second).toBe(`# Load them with import_config {"path": ${JSON.stringify(path)}}.`);
      const report = await importConfig(draftIn(scope), { path, overwrite: false, scope });
      expect(report.imported).toEqual(['count_lines', 'bare', 'tricky']);
    }
  });
});
