// Upstream ahma-labs' livelog keys (SPEC §2 Compatibility): parameters, env, clear_command,
// prefilter_regex, structured_output and `${AHMA_LIVELOG_*}` in llm_provider load; unknown keys
// are warned about, not refused; what would run otherwise than written is refused with a pointer.
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/definition/diagnostic.js';
import { leafInputSchema } from '../../src/definition/input-schema.js';
import { mtdfJsonSchema } from '../../src/definition/json-schema.js';
import { validateToolFiles } from '../../src/definition/validate-files.js';
import { diagnosticsFor, fixture, leavesOf, validateOne } from './helpers.js';

const monitor = (livelog: Record<string, unknown> = {}) => ({
  name: 'watch',
  description: 'Watch the log.',
  command: 'echo',
  tool_type: 'livelog',
  livelog: {
    source_command: 'echo',
    source_args: ['logcat'],
    detection_prompt: 'Look for crashes.',
    llm_provider: { base_url: 'http://localhost:11434/v1', model: 'llama3.2' },
    ...livelog,
  },
});

const shown = (diagnostics: readonly Diagnostic[]) =>
  diagnostics.map((d) => [d.severity, d.pointer, d.message, d.hint]);

describe.concurrent('upstream livelog keys: files', () => {
  it('SPEC §2 livelog: ahma-labs android-logcat.json (source made echo) loads without an error or a livelog warning', async () => {
    const diagnostics = await validateOne(
      fixture('upstream-livelog', 'ahma-labs', 'android-logcat.json'),
    );
    // `hints` is another compatibility key, handled separately.
    expect(diagnostics.filter((d) => !d.pointer.startsWith('/hints'))).toEqual([]);
  });

  it('SPEC §2 livelog: the one-key files load; structured_output and unknown keys are warnings, with a did-you-mean', async () => {
    const report = await validateToolFiles([fixture('upstream-livelog', 'keys')]);
    const all = report.files.flatMap((file) =>
      shown(file.diagnostics).map((d) => [file.file.split('/').pop(), ...d]),
    );
    expect(all).toEqual([
      [
        'livelog-structured-output.json',
        'warning',
        '/livelog/structured_output',
        'structured_output is ignored: Ahma asks the model for a plain-text summary and alerts carry it as text',
        'remove it unless the file is shared with the Rust ahma',
      ],
      [
        'livelog-unknown-key.json',
        'warning',
        '/livelog/prefilter_regexp',
        '"prefilter_regexp" is not a livelog key Ahma knows; it is ignored',
        'did you mean "prefilter_regex"?',
      ],
      [
        'livelog-unknown-key.json',
        'warning',
        '/livelog/sampling_rate',
        '"sampling_rate" is not a livelog key Ahma knows; it is ignored',
        'remove it',
      ],
    ]);
  });

  it('SPEC §2 livelog: the leaf carries parameters, env, the clear arguments and the translated prefilter', async () => {
    const { readFile } = await import('node:fs/promises');
    const document = JSON.parse(
      await readFile(fixture('upstream-livelog', 'ahma-labs', 'android-logcat.json'), 'utf8'),
    ) as unknown;
    const [leaf] = leavesOf(document);
    expect(leaf?.livelog).toMatchObject({
      sourceArgs: ['logcat', '-b', 'main,crash,system', '-v', 'threadtime', '--pid=${pid}'],
      parameters: [
        { name: 'serial', required: false },
        { name: 'pid', required: false },
      ],
      env: { ANDROID_SERIAL: '${serial}' },
      clearArgs: ['logcat', '-c'],
      baseUrl: '${AHMA_LIVELOG_BASE_URL:-http://localhost:11434/v1}',
      model: '${AHMA_LIVELOG_MODEL:-lfm2.5:8b}',
    });
    expect(leaf?.livelog?.prefilter?.flags).toBe('iu');
    expect(leaf?.livelog?.prefilter?.source.startsWith('(FATAL|ANR\\b|')).toBe(true);
  });
});

describe.concurrent('upstream livelog keys: inputSchema', () => {
  it('SPEC §2 livelog: parameters are string arguments (a required one non-empty), and clear a boolean when there is a clear_command', () => {
    const [leaf] = leavesOf(
      monitor({
        source_args: ['logcat', '--pid=${pid}', '${serial}'],
        parameters: [
          { name: 'serial', description: 'Device serial.', required: true },
          { name: 'pid', description: 'Process id.' },
        ],
        clear_command: ['logcat', '-c'],
      }),
    );
    if (leaf === undefined) throw new Error('no leaf');
    const schema = leafInputSchema(leaf);
    const properties = schema['properties'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(properties)).toEqual([
      'serial',
      'pid',
      'clear',
      'working_directory',
      'timeout_seconds',
      'max_output_tokens',
    ]);
    expect(properties['serial']).toEqual({
      type: 'string',
      description: 'Device serial.',
      minLength: 1,
    });
    expect(properties['pid']).toEqual({ type: 'string', description: 'Process id.' });
    expect(properties['clear']?.['type']).toBe('boolean');
    expect(properties['clear']?.['description']).toContain('echo logcat -c');
    expect(schema['required']).toEqual(['serial']);
    expect(schema['additionalProperties']).toBe(false);
  });

  it('SPEC §2 livelog: the published JSON Schema describes the new keys', () => {
    const schema = JSON.stringify(mtdfJsonSchema());
    for (const key of [
      'parameters',
      'env',
      'clear_command',
      'prefilter_regex',
      'structured_output',
    ]) {
      expect(schema).toContain(`"${key}"`);
    }
  });
});

describe.concurrent('upstream livelog keys: checks', () => {
  it('R5.2 livelog: a ${name} no parameter declares is refused with a did-you-mean; an unclosed "${" too', () => {
    const diagnostics = diagnosticsFor(
      monitor({
        source_args: ['logcat', '--pid=${pidd}', '${HOME}/log', 'a${b'],
        parameters: [{ name: 'pid', description: 'Process id.' }],
        env: { ANDROID_SERIAL: '${serial}' },
      }),
    );
    expect(shown(diagnostics)).toEqual([
      [
        'error',
        '/livelog/source_args/1',
        'references "${pidd}", which no parameter declares: upstream leaves this element out of every call',
        'did you mean "${pid}"?',
      ],
      [
        'error',
        '/livelog/source_args/2',
        'references "${HOME}", which no parameter declares: upstream leaves this element out of every call',
        'declare "HOME" in "parameters"; for a shell variable in a script write $HOME',
      ],
      [
        'error',
        '/livelog/source_args/3',
        'has a "${" without a closing "}": upstream leaves this element out of every call',
        'close it, or write "$" without "{"',
      ],
      [
        'error',
        '/livelog/env/ANDROID_SERIAL',
        'references "${serial}", which no parameter declares: upstream leaves this element out of every call',
        'declare "serial" in "parameters"; for a shell variable in a script write $serial',
      ],
    ]);
  });

  it('R5.2 livelog: parameter names must be argument names, unique, and not a meta-parameter or "clear"', () => {
    const diagnostics = diagnosticsFor(
      monitor({
        parameters: [
          { name: 'pid', description: 'a' },
          { name: 'pid', description: 'b' },
          { name: 'working_directory', description: 'c' },
          { name: 'clear', description: 'd' },
          { name: 'two words', description: 'e' },
        ],
        clear_command: ['-c'],
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      ['/livelog/parameters/1/name', 'parameter "pid" is declared twice'],
      [
        '/livelog/parameters/2/name',
        'parameter "working_directory" has the name of a meta-parameter every tool takes',
      ],
      [
        '/livelog/parameters/3/name',
        'parameter "clear" has the name of the argument that skips clear_command',
      ],
      [
        '/livelog/parameters/4/name',
        'parameter name "two words" is not a name an argument can have',
      ],
    ]);
    // A typo inside a parameter is an error (below the livelog block the format stays strict).
    const typo = diagnosticsFor(monitor({ parameters: [{ name: 'pid', descripton: 'x' }] }));
    expect(
      typo.some((d) => d.severity === 'error' && d.pointer.startsWith('/livelog/parameters/0')),
    ).toBe(true);
  });

  it('R5.2 livelog: env names must be variable names the server does not set itself', () => {
    const diagnostics = diagnosticsFor(
      monitor({
        env: { 'BAD-NAME': 'x', CI: '0', BASH_ENV: '/tmp/x', __ahma_fd: '1', OK_NAME: 'x' },
      }),
    );
    expect(diagnostics.map((d) => [d.pointer, d.message])).toEqual([
      [
        '/livelog/env/BAD-NAME',
        '"BAD-NAME" is not an environment variable name a command can be given',
      ],
      [
        '/livelog/env/CI',
        'CI is set (or removed) by the server for every command; a tool file cannot change it',
      ],
      [
        '/livelog/env/BASH_ENV',
        'BASH_ENV is set (or removed) by the server for every command; a tool file cannot change it',
      ],
      [
        '/livelog/env/__ahma_fd',
        '"__ahma_fd" is not an environment variable name a command can be given',
      ],
    ]);
  });

  it('R5.2 livelog: an empty clear_command is refused (it would run the source command bare)', () => {
    expect(shown(diagnosticsFor(monitor({ clear_command: [] })))).toEqual([
      [
        'error',
        '/livelog/clear_command',
        'clear_command is empty: it would run source_command itself, with no arguments',
        'give the arguments of source_command that clear the source, e.g. ["logcat", "-c"]',
      ],
    ]);
  });

  it('R5.2 livelog: a prefilter_regex that is no regular expression is refused with a clear message', () => {
    const problem = (pattern: string) =>
      diagnosticsFor(monitor({ prefilter_regex: pattern })).map((d) => [d.pointer, d.message]);
    const [unclosed] = problem('(FATAL|ANR');
    expect(unclosed?.[0]).toBe('/livelog/prefilter_regex');
    expect(unclosed?.[1]).toMatch(
      /^prefilter_regex is not a valid regular expression: .*Unterminated group/,
    );
    expect(problem('panic(?i)error')).toEqual([
      [
        '/livelog/prefilter_regex',
        'prefilter_regex sets flags in the middle ((?i)); JavaScript takes flags for the whole pattern only: put them at its start',
      ],
    ]);
    expect(problem('(?x) a b')[0]?.[1]).toBe(
      'prefilter_regex takes the flag "x" ((?x)), which JavaScript\'s regular expressions do not have; use i, m or s',
    );
    expect(problem('(?i)(FATAL|\\sE\\s)')).toEqual([]);
  });

  it('R5.2 livelog: llm_provider reads only AHMA_LIVELOG_* variables; a default base_url is checked as a URL', () => {
    const provider = (base_url: string, model = 'm') =>
      diagnosticsFor(monitor({ llm_provider: { base_url, model } })).map((d) => [
        d.pointer,
        d.message,
      ]);
    expect(
      provider('${AHMA_LIVELOG_BASE_URL:-http://localhost:11434/v1}', '${AHMA_LIVELOG_MODEL}'),
    ).toEqual([]);
    expect(provider('${AHMA_LIVELOG_BASE_URL}')).toEqual([]);
    expect(provider('${AHMA_LIVELOG_BASE_URL:-ftp://host/v1}')).toEqual([
      ['/livelog/llm_provider/base_url', 'base_url must be an http:// or https:// URL, not "ftp:"'],
    ]);
    expect(provider('http://h/v1', '${OPENAI_API_KEY}')).toEqual([
      [
        '/livelog/llm_provider/model',
        'model may read only variables named AHMA_LIVELOG_*, not OPENAI_API_KEY',
      ],
    ]);
    expect(provider('http://h/v1', '${not a name}')[0]?.[1]).toBe(
      '"${not a name}" is not a variable reference',
    );
  });
});
