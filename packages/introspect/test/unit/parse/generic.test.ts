// SPEC §15 introspection: the generic reading, for helps no family claims: option-looking lines anywhere, the
// usage's positionals, a commands heading; what it cannot read goes to `unparsed`.
import { describe, expect, it } from 'vitest';
import { genericParser } from '../../../src/parse/parsers/generic.js';

const TEXT = [
  'frob - turns widgets into gadgets',
  '',
  'Usage: frob [options] <input> [output]...',
  '',
  'Things you can say:',
  '   -n, --count <n>      how many widgets to frob',
  '   -o FILE              where to write',
  '   --dry-run            show what would happen',
  '   -x -y                both at once',
  '',
  'Commands:',
  '  spin      spin the widget',
  '  ???',
  '',
].join('\n');

describe('SPEC §15 introspection: generic reading', () => {
  const model = genericParser.parse(TEXT, 'frob');

  it('SPEC §15 introspection: style unknown; never claims a text by itself', () => {
    expect(model.style).toBe('unknown');
    expect(genericParser.detect(TEXT, 'frob')).toBe(0);
    expect(model.description).toBe('turns widgets into gadgets');
  });

  it('SPEC §15 introspection: option lines anywhere, with types and paths', () => {
    expect(model.options).toEqual([
      {
        long: 'count',
        short: 'n',
        value: { name: 'n', type: 'integer' },
        description: 'how many widgets to frob',
      },
      {
        short: 'o',
        value: { name: 'FILE', type: 'string', path: true },
        description: 'where to write',
      },
      { long: 'dry-run', description: 'show what would happen' },
    ]);
  });

  it('SPEC §15 introspection: usage positionals, a commands heading, and the unreadable lines in unparsed', () => {
    expect(model.positionals).toEqual([
      { name: 'input', required: true, repeated: false },
      { name: 'output', required: false, repeated: true },
    ]);
    expect(model.subcommands).toEqual([{ name: 'spin', description: 'spin the widget' }]);
    expect(model.unparsed).toEqual(['-x -y both at once', '???']);
  });

  it('SPEC §15 introspection: a subcommand help is asked with --help, then with help SUB', () => {
    expect(genericParser.subcommandHelp(['spin'])).toEqual([
      ['spin', '--help'],
      ['help', 'spin'],
    ]);
  });
});
