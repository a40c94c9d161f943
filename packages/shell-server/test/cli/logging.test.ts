import { describe, expect, it } from 'vitest';
import { logDirectory, logFileName } from '../../src/cli/logging.js';

describe('log file location', () => {
  it('R16: one file per local day, named by its date', () => {
    expect(logFileName(new Date(2026, 0, 5, 23, 59))).toBe('ahma-2026-01-05.log');
    expect(logFileName(new Date(2026, 10, 22, 0, 0))).toBe('ahma-2026-11-22.log');
  });

  it('R16: the directory is $XDG_CACHE_HOME/ahma/logs when set', () => {
    expect(logDirectory({ XDG_CACHE_HOME: '/c' })).toBe('/c/ahma/logs');
    expect(logDirectory({})).toMatch(/\.cache\/ahma\/logs$|Library\/Caches\/ahma\/logs$/);
  });
});
