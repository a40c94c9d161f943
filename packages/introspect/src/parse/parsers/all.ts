// Every family's parser, in the order they are asked how sure they are.
import type { HelpParser } from '../model.js';
import { argparseParser } from './argparse.js';
import { clapParser } from './clap.js';
import { cobraParser } from './cobra.js';
import { commanderParser } from './commander.js';
import { gitParser } from './git.js';
import { gnuParser } from './gnu.js';
import { npmParser } from './npm.js';

export const PARSERS: readonly HelpParser[] = [
  gitParser,
  npmParser,
  cobraParser,
  clapParser,
  argparseParser,
  commanderParser,
  gnuParser,
];
