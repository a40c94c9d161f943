// The registry file: instant-mcp's state-file format. instant-mcp's own state.json loads as it is;
// invalid entries are kept verbatim (never lost) but not served; an unreadable file is moved aside
// to a timestamped backup (EC4).
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  commandEntries,
  parseRegistryText,
  renderRegistryFile,
  REGISTRY_FILE_VERSION,
  type RegistryEntry,
} from '../../src/registry/registry-file.js';
import { atPath, caseDirs, INSTANT_MCP, INSTANT_MCP_STATE, namesStartingWith } from './helpers.js';

const cases = caseDirs('registry-file');

const dir = cases.dir;

function entriesOf(text: string): Map<string, RegistryEntry> {
  const parsed = parseRegistryText(text);
  if (typeof parsed === 'string') throw new Error(`expected entries, got: ${parsed}`);
  return parsed;
}

describe('readRegistryFile', () => {
  it('FR5: a missing file is an empty registry, and nothing is created', async () => {
    const path = join(await dir(), 'registry.json');
    expect(await atPath.read(path)).toEqual({ kind: 'loaded', entries: new Map() });
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("FR5: instant-mcp's state.json loads unmodified, every command valid and in file order", async () => {
    const path = join(await dir(), 'state.json');
    await copyFile(join(INSTANT_MCP, 'state.json'), path);
    const read = await atPath.read(path);
    expect(read.kind).toBe('loaded');
    if (read.kind !== 'loaded') return;
    expect([...read.entries.keys()]).toEqual(['count_lines', 'greet']);
    expect(read.entries.get('count_lines')).toEqual({
      kind: 'command',
      command: INSTANT_MCP_STATE.count_lines,
    });
    expect(read.entries.get('greet')).toEqual({
      kind: 'command',
      command: INSTANT_MCP_STATE.greet,
    });
    // Reading never rewrites it.
    expect(await readFile(path, 'utf8')).toBe(
      await readFile(join(INSTANT_MCP, 'state.json'), 'utf8'),
    );
  });

  it('EC4: a file that is not JSON is moved aside to a timestamped backup, and the registry is empty', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    await writeFile(path, '{"version": "1.0", "commands": {');
    const now = new Date('2026-01-02T03:04:05.678Z');
    const read = await atPath.read(path, now);
    expect(read.kind).toBe('corrupt');
    if (read.kind !== 'corrupt') return;
    expect(read.backup).toBe(`${path}.corrupt-2026-01-02T03-04-05.678Z`);
    expect(read.problem.startsWith('not JSON: ')).toBe(true);
    expect(await readFile(read.backup, 'utf8')).toBe('{"version": "1.0", "commands": {');
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await namesStartingWith(folder, '')).toEqual([
      'registry.json.corrupt-2026-01-02T03-04-05.678Z',
    ]);
  });

  it('EC4: a version other than "1.0" is treated as corrupt (moved aside), not guessed at', async () => {
    for (const version of ['2.0', 1, '1', null]) {
      const path = join(await dir(), 'registry.json');
      await writeFile(path, JSON.stringify({ version, commands: {} }));
      const read = await atPath.read(path);
      expect(read).toMatchObject({
        kind: 'corrupt',
        problem: `version ${JSON.stringify(version)} is not 1.0`,
      });
    }
  });

  it('EC4: the backup name has no ":" (it is a valid file name everywhere)', async () => {
    const path = join(await dir(), 'registry.json');
    await writeFile(path, 'garbage');
    const read = await atPath.read(path);
    expect(read.kind).toBe('corrupt');
    if (read.kind !== 'corrupt') return;
    expect(read.backup.slice(path.length)).toMatch(
      /^\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/,
    );
  });

  it('EC4: what is not a regular file (a directory, a FIFO a command put there) is no registry: moved aside, never read', async () => {
    const path = join(await dir(), 'registry.json');
    await mkdir(path);
    expect(await atPath.read(path)).toMatchObject({
      kind: 'corrupt',
      problem: 'it is a directory, not a regular file',
    });
    expect(await namesStartingWith(dirname(path), 'registry.json')).toEqual([
      expect.stringMatching(/^registry\.json\.corrupt-/),
    ]);
  });
});

describe('parseRegistryText', () => {
  it('EC4: what is not a registry file says why', () => {
    expect(parseRegistryText('')).toMatch(/^not JSON: /);
    expect(parseRegistryText('[]')).toBe('not a JSON object');
    expect(parseRegistryText('null')).toBe('not a JSON object');
    expect(parseRegistryText('"text"')).toBe('not a JSON object');
    expect(parseRegistryText('{"commands": []}')).toBe('"commands" is not an object');
    expect(parseRegistryText('{"commands": "x"}')).toBe('"commands" is not an object');
    expect(parseRegistryText('{"version": "2.0"}')).toBe('version "2.0" is not 1.0');
  });

  it('FR5: no version and no commands (or null) is an empty registry', () => {
    expect(entriesOf('{}').size).toBe(0);
    expect(entriesOf('{"version": "1.0"}').size).toBe(0);
    expect(entriesOf('{"version": "1.0", "commands": null}').size).toBe(0);
    expect(entriesOf('{"commands": {"a": {"exec": "wc"}}}').size).toBe(1);
  });
});

describe('commandEntries', () => {
  it('FR5: an entry without a name is named by its key', () => {
    const entries = commandEntries({ greet: { exec: 'wc', description: 'd' } });
    expect(entries.get('greet')).toEqual({
      kind: 'command',
      command: { name: 'greet', exec: 'wc', description: 'd' },
    });
  });

  it('FR5: an entry whose name differs from its key is rejected, saying so', () => {
    const raw = { name: 'other', exec: 'wc' };
    expect(commandEntries({ greet: raw }).get('greet')).toEqual({
      kind: 'rejected',
      name: 'greet',
      raw,
      problem: 'its key "greet" differs from its name "other"',
    });
  });

  it('FR5: an invalid entry is rejected with the reason, kept as it was, and does not stop the others', () => {
    const bad = { name: 'bad', exec: 'wc', timeout: 'forever' };
    const entries = commandEntries({ good: { exec: 'wc' }, bad, worse: 'text', 'bad-key': {} });
    expect([...entries.keys()]).toEqual(['good', 'bad', 'worse', 'bad-key']);
    expect(entries.get('good')?.kind).toBe('command');
    const rejected = entries.get('bad');
    expect(rejected).toMatchObject({ kind: 'rejected', name: 'bad' });
    if (rejected?.kind !== 'rejected') return;
    expect(rejected.raw).toBe(bad);
    expect(rejected.problem).toBe(
      'command "bad" is invalid:\n- timeout "forever" is not a duration like "30s", "5m", "1h" or "1h30m"',
    );
    expect(entries.get('worse')).toMatchObject({
      kind: 'rejected',
      raw: 'text',
      problem: 'the command is invalid:\n- a command is an object',
    });
    expect(entries.get('bad-key')).toMatchObject({
      kind: 'rejected',
      problem: expect.stringContaining('name "bad-key" is not a command name') as unknown,
    });
  });

  it('FR5: a "__proto__" key is an ordinary (rejected) entry, not a prototype', () => {
    const entries = commandEntries(
      JSON.parse('{"__proto__": {"exec": "wc"}, "ok": {"exec": "wc"}}') as Record<string, unknown>,
    );
    expect([...entries.keys()]).toEqual(['__proto__', 'ok']);
    expect(entries.get('__proto__')?.kind).toBe('rejected');
    const text = renderRegistryFile(entries);
    expect(JSON.parse(text)).toEqual(
      JSON.parse(
        '{"version": "1.0", "commands": {"__proto__": {"exec": "wc"}, "ok": {"name": "ok", "exec": "wc"}}}',
      ),
    );
    expect(Object.keys((JSON.parse(text) as { commands: object }).commands)).toEqual([
      '__proto__',
      'ok',
    ]);
  });
});

describe('renderRegistryFile', () => {
  it('FR5: the file is version 1.0 with the commands in order, indented, ending in a newline', () => {
    const entries = commandEntries({
      zeta: { exec: 'wc', description: 'last first' },
      alpha: { exec: './a.sh', args: { f: { type: 'string', flag: '-f' } }, async: true },
    });
    expect(REGISTRY_FILE_VERSION).toBe('1.0');
    expect(renderRegistryFile(entries)).toBe(
      `${JSON.stringify(
        {
          version: '1.0',
          commands: {
            zeta: { name: 'zeta', exec: 'wc', description: 'last first' },
            alpha: {
              name: 'alpha',
              exec: './a.sh',
              args: { f: { type: 'string', flag: '-f' } },
              async: true,
            },
          },
        },
        null,
        2,
      )}\n`,
    );
  });

  it('FR5: rejected entries are written back verbatim, so rewriting the file loses nothing', () => {
    const original = {
      version: '1.0',
      commands: {
        good: { name: 'good', exec: 'wc' },
        broken: { name: 'broken', exec: 'wc', timeout: 'soon', extra: { deep: [1, 2, 3] } },
        renamed: { name: 'elsewhere', exec: 'wc' },
        scalar: 42,
      },
    };
    const text = renderRegistryFile(entriesOf(JSON.stringify(original)));
    expect(JSON.parse(text)).toEqual(original);
  });

  it("FR5: instant-mcp's state.json comes back from a rewrite with the same commands", async () => {
    const text = await readFile(join(INSTANT_MCP, 'state.json'), 'utf8');
    const rewritten = renderRegistryFile(entriesOf(text));
    expect(JSON.parse(rewritten)).toEqual(JSON.parse(text));
    // And the rewrite reads back to the same entries.
    expect(entriesOf(rewritten)).toEqual(entriesOf(text));
  });

  it('FR5: an empty registry is an empty commands map', () => {
    expect(renderRegistryFile(new Map())).toBe('{\n  "version": "1.0",\n  "commands": {}\n}\n');
  });
});
