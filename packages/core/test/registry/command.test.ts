// parseCommand: every way a command enters the registry goes through it, so each of its checks is
// proven here, message by message, along with what it keeps and what it drops as unset.
import { describe, expect, it } from 'vitest';
import { MAX_TIMEOUT_SECONDS } from '../../src/definition/schema.js';
import {
  ARGUMENT_TYPES,
  COMMAND_NAME_PATTERN,
  parseCommand,
  timeoutSeconds,
} from '../../src/registry/command.js';
import { thrown } from './helpers.js';

const base = { name: 'greet', exec: './scripts/greet.sh', description: 'Greet someone' };

/** The problems COMMAND_INVALID lists for `raw` (the lines after the first). */
function problems(raw: unknown): string[] {
  const error = thrown(() => parseCommand(raw), 'COMMAND_INVALID');
  const [, ...lines] = error.message.split('\n');
  return lines.map((line) => line.replace(/^- /, ''));
}

/** The one problem COMMAND_INVALID names for `raw`. */
function problem(raw: unknown): string {
  const found = problems(raw);
  expect(found).toHaveLength(1);
  return found[0] ?? '';
}

const withArgs = (args: unknown): Record<string, unknown> => ({ ...base, args });

describe('parseCommand: a valid command', () => {
  it('FR4.1: name, exec, args, description, async and timeout are kept as given', () => {
    const raw = {
      name: 'count_lines',
      exec: 'wc',
      args: {
        file: { type: 'string', description: 'File to count', required: true, format: 'path' },
        lines: { type: 'boolean', flag: '-l' },
        max: { type: 'integer', flag: '--max-count' },
        ratio: { type: 'number' },
      },
      description: 'Count lines',
      async: true,
      timeout: '1h30m',
    };
    expect(parseCommand(raw)).toEqual(raw);
  });

  it('FR4.1: only name and exec are needed; the description is optional (instant-mcp)', () => {
    expect(parseCommand({ name: 'x', exec: 'wc' })).toEqual({ name: 'x', exec: 'wc' });
  });

  it('FR4.1: the arguments keep their declared order', () => {
    const command = parseCommand(
      withArgs({ zeta: { type: 'string' }, alpha: { type: 'string' }, mid: { type: 'number' } }),
    );
    expect(Object.keys(command.args ?? {})).toEqual(['zeta', 'alpha', 'mid']);
  });

  it('FR4.1: every argument type is accepted: string, number, integer, boolean', () => {
    expect(ARGUMENT_TYPES).toEqual(['string', 'number', 'integer', 'boolean']);
    for (const type of ARGUMENT_TYPES) {
      expect(parseCommand(withArgs({ a: { type } })).args).toEqual({ a: { type } });
    }
  });

  it('FR4.7: "" and false mean unset, as in instant-mcp exports (description, timeout, async, args {}, required, flag, format)', () => {
    const command = parseCommand({
      name: 'lint',
      exec: './scripts/lint.sh',
      args: { file: { type: 'string', description: '', required: false, flag: '', format: '' } },
      description: '',
      async: false,
      timeout: '',
    });
    expect(command).toEqual({
      name: 'lint',
      exec: './scripts/lint.sh',
      args: { file: { type: 'string' } },
    });
    expect(parseCommand({ name: 'lint', exec: 'wc', args: {} })).toEqual({
      name: 'lint',
      exec: 'wc',
    });
  });

  it('FR4.3: null means unset for every optional field', () => {
    expect(
      parseCommand({
        name: 'x',
        exec: 'wc',
        args: null,
        description: null,
        timeout: null,
        async: undefined,
      }),
    ).toEqual({ name: 'x', exec: 'wc' });
    expect(
      parseCommand(withArgs({ a: { type: 'string', description: null, flag: null, format: null } }))
        .args,
    ).toEqual({ a: { type: 'string' } });
  });

  it('FR4.1: names are ASCII letters, digits and "_", 1 to 128 of them', () => {
    for (const name of ['a', 'A_b_9', '9lives', '_', 'x'.repeat(128), 'constructor']) {
      expect(parseCommand({ name, exec: 'wc' }).name).toBe(name);
      expect(COMMAND_NAME_PATTERN.test(name)).toBe(true);
    }
  });

  it('FR4.1: argument names may hold "-" after their first character, and prototype words are ordinary names', () => {
    const command = parseCommand(
      withArgs({
        'dry-run': { type: 'boolean' },
        _x: { type: 'string' },
        toString: { type: 'string' },
      }),
    );
    expect(Object.keys(command.args ?? {})).toEqual(['dry-run', '_x', 'toString']);
  });

  it('FR4.1: flags like "-n", "--name", "--max.count" and "-9" are accepted', () => {
    for (const flag of ['-n', '--name', '--max.count', '--a_b-c', '-9']) {
      expect(parseCommand(withArgs({ a: { type: 'string', flag } })).args).toEqual({
        a: { type: 'string', flag },
      });
    }
  });
});

describe('parseCommand: what is refused, and how it is said', () => {
  it('FR4.1: a command that is not an object is refused', () => {
    for (const raw of [null, 'greet', 42, ['greet'], undefined]) {
      const error = thrown(() => parseCommand(raw), 'COMMAND_INVALID');
      expect(error.message).toBe('the command is invalid:\n- a command is an object');
    }
  });

  it('FR4.1: unknown fields are named, with the list of fields', () => {
    expect(problem({ ...base, command: 'x' })).toBe(
      'unknown field "command" (fields: name, exec, args, description, async, timeout)',
    );
  });

  it('FR4.1: the message names the command when it has a string name, else "the command"', () => {
    const named = thrown(() => parseCommand({ ...base, async: 'yes' }), 'COMMAND_INVALID');
    expect(named.message).toBe('command "greet" is invalid:\n- async is true or false');
    const unnamed = thrown(() => parseCommand({ exec: 'wc' }), 'COMMAND_INVALID');
    expect(unnamed.message.startsWith('the command is invalid:\n')).toBe(true);
  });

  it('FR4.1: a name that is missing, empty, not ASCII word characters or too long is refused', () => {
    const cases: [unknown, string][] = [
      [undefined, 'undefined'],
      ['', '""'],
      ['my-tool', '"my-tool"'],
      ['my tool', '"my tool"'],
      ['héllo', '"héllo"'],
      ['a.b', '"a.b"'],
      ['x'.repeat(129), JSON.stringify('x'.repeat(129))],
      [7, '7'],
    ];
    for (const [name, shown] of cases) {
      expect(problem({ name, exec: 'wc' })).toBe(
        `name ${shown} is not a command name: 1–128 ASCII letters, digits or "_", not digits only`,
      );
    }
  });

  it('FR4.1: "__proto__" is never a command name (as a key it would set a prototype)', () => {
    expect(COMMAND_NAME_PATTERN.test('__proto__')).toBe(false);
    expect(problem(JSON.parse('{"name": "__proto__", "exec": "wc"}'))).toBe(
      'name "__proto__" is not a command name: 1–128 ASCII letters, digits or "_", not digits only',
    );
    // Names that merely contain it are fine.
    expect(parseCommand({ name: '__proto__x', exec: 'wc' }).name).toBe('__proto__x');
  });

  it('FR6.2: exec is required: missing, empty, blank or not a string', () => {
    for (const exec of [undefined, '', '   ', 42, null]) {
      expect(problem({ name: 'x', exec })).toBe(
        'exec is required: the executable to run (absolute, ./relative or on PATH)',
      );
    }
  });

  it('FR6.2: an exec with a NUL byte is refused', () => {
    expect(problem({ name: 'x', exec: 'wc\0-l' })).toBe('exec contains a NUL byte');
  });

  it('FR4.1: description, timeout are strings and async a boolean', () => {
    expect(problem({ ...base, description: 42 })).toBe('description is a string');
    expect(problem({ ...base, timeout: 30 })).toBe('timeout is a string');
    expect(problem({ ...base, async: 'true' })).toBe('async is true or false');
    expect(problem({ ...base, async: 1 })).toBe('async is true or false');
  });

  it('FR4.1: timeouts are "30s", "5m", "1h" or sums like "1h30m"', () => {
    for (const timeout of ['30s', '5m', '1h', '1h30m', '2m30s', '1h1m1s', '120s', '007s']) {
      expect(parseCommand({ ...base, timeout }).timeout).toBe(timeout);
    }
  });

  it('FR4.1: a timeout that is not a duration is refused, naming the forms', () => {
    for (const timeout of [
      '30',
      '30 s',
      's',
      '1d',
      '30m1h',
      '1.5h',
      '-5s',
      '5S',
      ' 5s',
      '1h 30m',
    ]) {
      expect(problem({ ...base, timeout })).toBe(
        `timeout "${timeout}" is not a duration like "30s", "5m", "1h" or "1h30m"`,
      );
    }
  });

  it('FR4.1: a timeout of zero ("0s", "0h0m") is refused', () => {
    for (const timeout of ['0s', '0h0m', '0m0s']) {
      expect(problem({ ...base, timeout })).toBe(
        `timeout "${timeout}" is not a duration like "30s", "5m", "1h" or "1h30m"`,
      );
    }
  });

  it('FR4.1: a timeout over the maximum is refused; the maximum itself is accepted', () => {
    expect(MAX_TIMEOUT_SECONDS).toBe(86_400);
    for (const timeout of ['86401s', '25h', '24h0m1s', '99999999999999999999s']) {
      expect(problem({ ...base, timeout })).toBe(
        `timeout "${timeout}" exceeds the 86400 s maximum`,
      );
    }
    for (const timeout of ['86400s', '24h', '1440m']) {
      expect(parseCommand({ ...base, timeout }).timeout).toBe(timeout);
    }
  });

  it('FR4.1: args is an object (not a list or a string)', () => {
    for (const args of [[{ type: 'string' }], 'file', 3]) {
      expect(problem(withArgs(args))).toBe(
        'args is an object: {"arg_name": {"type": "string", "required": true}}',
      );
    }
  });

  it('FR4.1: argument names start with a letter or "_" and hold letters, digits, "_" and "-"', () => {
    const names = ['1st', '-v', 'a b', 'a.b', 'é', '', 'x'.repeat(65)];
    for (const name of names) {
      expect(problem(withArgs({ [name]: { type: 'string' } }))).toBe(
        `args.${name}: an argument name starts with a letter or "_" (letters, digits, _ -)`,
      );
    }
    expect(parseCommand(withArgs({ ['x'.repeat(64)]: { type: 'string' } })).args).toBeDefined();
  });

  it('FR4.1: "__proto__" is never an argument name', () => {
    const raw = JSON.parse(
      '{"name": "x", "exec": "wc", "args": {"__proto__": {"type": "string"}}}',
    );
    expect(problem(raw)).toBe(
      'args.__proto__: an argument name starts with a letter or "_" (letters, digits, _ -)',
    );
  });

  it('FR4.1: the meta-parameters every command tool takes are not argument names', () => {
    for (const name of ['working_directory', 'timeout_seconds', 'execution_mode']) {
      expect(problem(withArgs({ [name]: { type: 'string' } }))).toBe(
        `args.${name}: "${name}" is a meta-parameter every command tool already takes`,
      );
    }
  });

  it('FR4.1: an argument is an object', () => {
    for (const value of ['string', null, [], true]) {
      expect(problem(withArgs({ file: value }))).toBe(
        'args.file is an object with type, description and required',
      );
    }
  });

  it("FR4.1: an argument's unknown fields are named, with its list of fields", () => {
    expect(problem(withArgs({ file: { type: 'string', default: 'x' } }))).toBe(
      'args.file: unknown field "default" (fields: type, description, required, flag, format)',
    );
  });

  it("FR4.1: an argument's type is one of string, number, integer, boolean", () => {
    for (const [type, shown] of [
      [undefined, 'undefined'],
      ['array', '"array"'],
      ['String', '"String"'],
      [1, '1'],
    ] as const) {
      expect(problem(withArgs({ file: { type } }))).toBe(
        `args.file.type ${shown} is not one of string, number, integer, boolean`,
      );
    }
  });

  it("FR4.1: an argument's description and flag are strings, required a boolean", () => {
    expect(problem(withArgs({ f: { type: 'string', description: 1 } }))).toBe(
      'args.f.description is a string',
    );
    expect(problem(withArgs({ f: { type: 'string', required: 'yes' } }))).toBe(
      'args.f.required is true or false',
    );
    expect(problem(withArgs({ f: { type: 'string', flag: 5 } }))).toBe('args.f.flag is a string');
  });

  it('FR4.1: a flag looks like "--name" or "-n"', () => {
    for (const flag of ['out', '-', '--', '---out', '--out=x', '--out x', '-_x', '--é']) {
      expect(problem(withArgs({ f: { type: 'string', flag } }))).toBe(
        `args.f.flag "${flag}" is not a flag like "--name" or "-n"`,
      );
    }
  });

  it('FR4.1: one flag used by two arguments is refused', () => {
    expect(
      problem(
        withArgs({
          out: { type: 'string', flag: '-o' },
          verbose: { type: 'boolean', flag: '-v' },
          output: { type: 'string', flag: '-o' },
        }),
      ),
    ).toBe('args.output: flag -o is used twice');
  });

  it('FR4.1: format is for string arguments only, and it is "path"', () => {
    const message = (name: string): string =>
      `args.${name}.format: only a string argument has a format, and it is "path"`;
    expect(problem(withArgs({ n: { type: 'integer', format: 'path' } }))).toBe(message('n'));
    expect(problem(withArgs({ b: { type: 'boolean', format: 'path' } }))).toBe(message('b'));
    expect(problem(withArgs({ u: { type: 'string', format: 'uri' } }))).toBe(message('u'));
    expect(problem(withArgs({ u: { type: 'string', format: 3 } }))).toBe(
      'args.u.format is a string',
    );
  });

  it('FR4.1: every problem is listed at once, arguments included', () => {
    const found = problems({
      name: 'bad name',
      exec: '',
      description: 3,
      async: 'no',
      timeout: '0s',
      extra: true,
      args: {
        working_directory: { type: 'string' },
        '9': { type: 'string' },
        a: { type: 'list', required: 1 },
      },
    });
    expect(found).toEqual([
      'unknown field "extra" (fields: name, exec, args, description, async, timeout)',
      'name "bad name" is not a command name: 1–128 ASCII letters, digits or "_", not digits only',
      'exec is required: the executable to run (absolute, ./relative or on PATH)',
      'description is a string',
      'async is true or false',
      'timeout "0s" is not a duration like "30s", "5m", "1h" or "1h30m"',
      // "9" is an integer key, so a JS object lists it first.
      'args.9: an argument name starts with a letter or "_" (letters, digits, _ -)',
      'args.working_directory: "working_directory" is a meta-parameter every command tool already takes',
      'args.a.type "list" is not one of string, number, integer, boolean',
      'args.a.required is true or false',
    ]);
  });

  it('FR4.1: the result holds only the known fields, never what the input carried besides', () => {
    const raw = { ...base, args: { a: { type: 'string', required: true } } };
    const command = parseCommand(raw);
    expect(command).not.toBe(raw);
    expect(command.args?.['a']).not.toBe(raw.args.a);
    expect(Object.keys(command)).toEqual(['name', 'exec', 'args', 'description']);
  });
});

describe('timeoutSeconds', () => {
  it('FR4.1: durations add up their hours, minutes and seconds', () => {
    expect(timeoutSeconds('30s')).toBe(30);
    expect(timeoutSeconds('5m')).toBe(300);
    expect(timeoutSeconds('1h')).toBe(3600);
    expect(timeoutSeconds('1h30m')).toBe(5400);
    expect(timeoutSeconds('1h0m5s')).toBe(3605);
    expect(timeoutSeconds('90m')).toBe(5400);
    expect(timeoutSeconds('0s')).toBe(0);
  });

  it('FR4.1: what is not a duration has no seconds', () => {
    for (const text of ['', '30', 'h', '1d', '1m1h', '1.5s', ' 1s', '1s ']) {
      expect(timeoutSeconds(text)).toBeUndefined();
    }
  });
});
