// The small text helpers of bundles on demand (SPEC §3): the one-line summary activate_tools shows
// and the did-you-mean of an unknown bundle name.
import { describe, expect, it } from 'vitest';
import {
  firstSentence,
  INSTALL_TEXT_LIMIT,
  installLine,
  suggestBundle,
} from '../../src/tools/bundles.js';

const NAMES = ['cargo', 'file-tools', 'gh', 'git', 'npm', 'pnpm', 'python'];

describe('bundle helpers', () => {
  it('SPEC §3 bundles: the summary is the first sentence of the description, on one line', () => {
    expect(firstSentence('Git version control.\nMore detail. Even more.')).toBe(
      'Git version control.',
    );
    expect(firstSentence('Version 1.2 of x does y. Then z.')).toBe('Version 1.2 of x does y.');
    expect(firstSentence('No final stop')).toBe('No final stop');
  });

  it.each([
    ['gti', 'git'],
    ['carg', 'cargo'],
    ['pyhton', 'python'],
    ['python3', 'python'],
    ['file', 'file-tools'],
    ['Git', 'git'],
  ])('SPEC §3 bundles: "%s" suggests "%s"', (typed, meant) => {
    expect(suggestBundle(typed, NAMES)).toBe(meant);
  });

  it('SPEC §3 bundles: nothing close, no suggestion', () => {
    expect(suggestBundle('kubectl', NAMES)).toBeUndefined();
    expect(suggestBundle('x', NAMES)).toBeUndefined();
  });

  it('SPEC §3 bundles: the install line of the list text is one line of bounded length', () => {
    expect(installLine('apt-get install gh,\n  or brew install gh')).toBe(
      'apt-get install gh, or brew install gh',
    );
    const long = installLine('x'.repeat(5000));
    expect(long).toHaveLength(INSTALL_TEXT_LIMIT);
    expect(long.endsWith('…')).toBe(true);
  });
});
