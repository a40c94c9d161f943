// R5.1/R5.2: ahma-validate's engine reports every problem of every file in one run.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import { formatDiagnostic } from '../../src/definition/diagnostic.js';
import { ToolFileReadError } from '../../src/definition/tool-files.js';
import { validateToolFiles } from '../../src/definition/validate-files.js';
import { fixture } from './helpers.js';

/** RFC 6901: "" or a sequence of "/segment" with "~" and "/" escaped. */
const JSON_POINTER = /^(\/([^~/]|~[01])*)*$/;

/** Where each broken fixture must be reported: the one pointer of the one check it fails. */
const expectedPointers: Readonly<Record<string, string>> = {
  'after-double-dash-on-option.json': '/subcommand/0/options/0/after_double_dash',
  'default-not-in-enum.json': '/subcommand/0/options/0/default',
  'default-type-mismatch.json': '/subcommand/0/options/0/default',
  'duplicate-json-key.json': '/description',
  'duplicate-option-name.json': '/subcommand/0/options/1/name',
  'duplicate-option-positional-name.json': '/subcommand/0/positional_args/0/name',
  'file-flag-without-file-arg.json': '/subcommand/0/options/0/file_flag',
  'format-path-on-integer.json': '/subcommand/0/options/0/format',
  'invalid-json-syntax.json': '',
  'missing-required-key.json': '/command',
  'name-collision-within-file.json': '/subcommand/1/subcommand/0/name',
  'options-on-branch-subcommand.json': '/subcommand/0/options',
  'required-positional-after-optional.json': '/subcommand/0/positional_args/1',
  'reserved-definition-name.json': '/name',
  'reserved-produced-tool-name.json': '/subcommand/0/name',
  'sequence-cycle.json': '/sequence/0/tool',
  'sequence-missing-leaf.json': '/subcommand/1/sequence/0/tool',
  'sequence-missing-tool.json': '/sequence/0/tool',
  'sequence-parameter-unused.json': '/subcommand/0/options/0/name',
  'sequence-unknown-step-arg.json': '/sequence/0/args/comand',
  'timeout-above-maximum.json': '/timeout_seconds',
  'timeout-below-minimum.json': '/timeout_seconds',
  'top-level-sequence-without-sequence-command.json': '/sequence',
  'unknown-key.json': '/subcommand/0/timeout_secnds',
  'wrong-type.json': '/synchronous',
};

describe('validateToolFiles', () => {
  it('R5.2: the whole broken folder is reported in one run: every file, each problem with a pointer', async () => {
    const dir = fixture('broken');
    const report = await validateToolFiles([dir]);
    const definitionFiles = readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort();
    expect(report.files.map((f) => f.file)).toEqual(
      definitionFiles.map((name) => fixture('broken', name)),
    );

    const actual: Record<string, string> = {};
    for (const { file, diagnostics } of report.files) {
      const name = file.slice(dir.length + 1);
      if (name === 'tool_guidance.json') {
        expect(diagnostics).toEqual([]);
        continue;
      }
      // Exactly one problem: each fixture fails only the check it is named after.
      expect(diagnostics, name).toHaveLength(1);
      for (const d of diagnostics) {
        expect(d.file).toBe(file);
        expect(d.pointer).toMatch(JSON_POINTER);
        expect(d.message.length).toBeGreaterThan(0);
        actual[name] = d.pointer;
      }
    }
    expect(actual).toEqual(expectedPointers);
  });

  it('R5.2: every diagnostic formats as one line "file#/pointer: message (hint)"', async () => {
    const report = await validateToolFiles([fixture('broken', 'unknown-key.json')]);
    const [d] = report.files[0]?.diagnostics ?? [];
    if (d === undefined) throw new Error('no diagnostic');
    expect(formatDiagnostic(d)).toBe(
      `${fixture('broken', 'unknown-key.json')}#/subcommand/0/timeout_secnds: unknown key "timeout_secnds" (did you mean "timeout_seconds"?)`,
    );
    expect(
      formatDiagnostic({
        file: 'a.json',
        pointer: '/command',
        message: 'missing',
        severity: 'error',
      }),
    ).toBe('a.json#/command: missing');
  });

  it('R5.1: the valid folder reports no problem for any file', async () => {
    const report = await validateToolFiles([fixture('valid')]);
    expect(report.files.length).toBeGreaterThanOrEqual(6);
    for (const f of report.files) expect(f.diagnostics, f.file).toEqual([]);
  });

  it('R5.1: the catalog folder is valid too', async () => {
    const report = await validateToolFiles([fixture('catalog')]);
    expect(report.files.flatMap((f) => f.diagnostics)).toEqual([]);
  });

  it('R5.2: a named file is checked with its directory but only it is reported', async () => {
    const file = fixture('valid', 'ci.json');
    const report = await validateToolFiles([file]);
    // ci.json's steps call cargo, defined beside it: it validates only with its siblings.
    expect(report.files).toEqual([{ file, diagnostics: [] }]);
  });

  it('R5.2: several targets are reported in the order given', async () => {
    const a = fixture('broken', 'wrong-type.json');
    const b = fixture('valid', 'date.json');
    const report = await validateToolFiles([a, b]);
    expect(report.files.map((f) => [f.file, f.diagnostics.length])).toEqual([
      [a, 1],
      [b, 0],
    ]);
  });

  it('R5.2: a missing target throws ToolFileReadError naming it, an AhmaError with its code', async () => {
    const missing = fixture('broken', 'does-not-exist.json');
    const error = await validateToolFiles([missing]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFileReadError);
    expect(error).toBeInstanceOf(AhmaError);
    expect(error).toMatchObject({ code: 'TOOL_FILE_UNREADABLE', path: missing });
    expect((error as Error).message).toBe(`cannot read ${missing}: no such file or directory`);
  });
});
