// What one livelog call runs (SPEC §2 Compatibility, upstream ahma-labs' resolve_runtime): the
// call's parameters in source_args and env, `clear`, and llm_provider's AHMA_LIVELOG_* variables.
import { describe, expect, it } from 'vitest';
import { resolveLivelog, type LivelogSettings } from '../../src/definition/livelog-settings.js';
import { AhmaError } from '../../src/errors.js';
import { resolveLivelogStart } from '../../src/livelog/start.js';

const settings = (overrides: Record<string, unknown> = {}): LivelogSettings =>
  resolveLivelog({
    source_command: 'adb',
    source_args: ['logcat', '-v', 'threadtime', '--pid=${pid}', '${serial}:${pid}'],
    parameters: [
      { name: 'serial', description: 'Device serial.' },
      { name: 'pid', description: 'Process id.' },
    ],
    env: { ANDROID_SERIAL: '${serial}', FIXED: 'yes' },
    clear_command: ['logcat', '-c'],
    detection_prompt: 'Look for crashes.',
    llm_provider: {
      base_url: '${AHMA_LIVELOG_BASE_URL:-http://localhost:11434/v1/}',
      model: '${AHMA_LIVELOG_MODEL:-lfm2.5:8b}',
    },
    ...overrides,
  });

const refusal = (run: () => unknown): [string, string] => {
  try {
    run();
  } catch (error) {
    if (error instanceof AhmaError) return [error.code, error.message];
    throw error;
  }
  throw new Error('not refused');
};

describe.concurrent('resolveLivelogStart', () => {
  it('SPEC §2 livelog: given parameters are put in place; an element or env entry naming an omitted one is left out', () => {
    const given = resolveLivelogStart(settings(), { serial: 'emulator-5554', pid: '1234' }, {});
    expect(given.argv).toEqual([
      'adb',
      'logcat',
      '-v',
      'threadtime',
      '--pid=1234',
      'emulator-5554:1234',
    ]);
    expect(given.env).toEqual({ ANDROID_SERIAL: 'emulator-5554', FIXED: 'yes' });
    // Omitted, and given empty (as upstream, an empty string is not a value).
    const omitted = resolveLivelogStart(settings(), { pid: '' }, {});
    expect(omitted.argv).toEqual(['adb', 'logcat', '-v', 'threadtime']);
    expect(omitted.env).toEqual({ FIXED: 'yes' });
  });

  it('SPEC §2 livelog: a value with shell metacharacters or "${…}" is one literal argv element, never read again', () => {
    const value = `x'; touch /tmp/pwned; echo $(id) \`id\` "\${pid}" | cat > out &`;
    const start = resolveLivelogStart(settings(), { serial: value, pid: '${serial}' }, {});
    expect(start.argv.slice(4)).toEqual(['--pid=${serial}', `${value}:\${serial}`]);
    expect(start.env['ANDROID_SERIAL']).toBe(value);
  });

  it('SPEC §2 livelog: clear_command runs as the source command with its arguments, unless the call says clear: false', () => {
    expect(resolveLivelogStart(settings(), {}, {}).clearArgv).toEqual(['adb', 'logcat', '-c']);
    expect(resolveLivelogStart(settings(), { clear: true }, {}).clearArgv).toEqual([
      'adb',
      'logcat',
      '-c',
    ]);
    expect(resolveLivelogStart(settings(), { clear: false }, {}).clearArgv).toBeUndefined();
    expect(
      resolveLivelogStart(settings({ clear_command: undefined }), {}, {}).clearArgv,
    ).toBeUndefined();
  });

  it('SPEC §2 livelog: base_url and model read AHMA_LIVELOG_* from the server, else their defaults', () => {
    const defaults = resolveLivelogStart(settings(), {}, { AHMA_LIVELOG_MODEL: '' });
    expect([defaults.baseUrl, defaults.model]).toEqual(['http://localhost:11434/v1', 'lfm2.5:8b']);
    const set = resolveLivelogStart(
      settings(),
      {},
      {
        AHMA_LIVELOG_BASE_URL: 'https://llm.example/v1',
        AHMA_LIVELOG_MODEL: 'llama3.2',
      },
    );
    expect([set.baseUrl, set.model]).toEqual(['https://llm.example/v1', 'llama3.2']);
  });

  it('SPEC §2 livelog: a call is refused before anything runs: a required parameter missing, a NUL byte, an unset variable, a bad URL', () => {
    const required = settings({
      parameters: [{ name: 'serial', description: 'Device serial.', required: true }],
      source_args: ['${serial}'],
      env: {},
    });
    expect(refusal(() => resolveLivelogStart(required, { serial: '' }, {}))).toEqual([
      'ARGUMENTS_INVALID',
      'argument "serial" is required and may not be empty',
    ]);
    expect(refusal(() => resolveLivelogStart(settings(), { pid: 'a\0b' }, {}))).toEqual([
      'ARGUMENTS_INVALID',
      'argument "pid" holds a NUL byte, which no program can receive',
    ]);
    const unset = settings({
      llm_provider: { base_url: '${AHMA_LIVELOG_BASE_URL}', model: 'm' },
    });
    expect(refusal(() => resolveLivelogStart(unset, {}, {}))[1]).toBe(
      'llm_provider.base_url reads ${AHMA_LIVELOG_BASE_URL}, which is not set in the server\'s environment (and gives no default, as "${AHMA_LIVELOG_BASE_URL:-…}" would)',
    );
    expect(
      refusal(() =>
        resolveLivelogStart(unset, {}, { AHMA_LIVELOG_BASE_URL: 'https://user:pw@host/v1' }),
      ),
    ).toEqual([
      'CONFIG_INVALID',
      'llm_provider.base_url, as read: base_url must not carry credentials (they would be logged and shown to agents)',
    ]);
  });
});
