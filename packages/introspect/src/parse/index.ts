// Reads a help text: the family whose parser is surest reads it; none sure enough, the generic
// reading (parsers/generic.ts) takes what it can and says what it could not.
import type { HelpModel, HelpParser, HelpStyle } from './model.js';
import { PARSERS } from './parsers/all.js';
import { genericParser } from './parsers/generic.js';

/** Below this, no family is claimed and the generic reading is used. */
const SURE_ENOUGH = 0.5;

export function parserFor(text: string, program: string, style?: HelpStyle): HelpParser {
  if (style !== undefined && style !== 'unknown') {
    const named = PARSERS.find((parser) => parser.style === style);
    if (named !== undefined) return named;
  }
  let best: HelpParser = genericParser;
  let bestScore = SURE_ENOUGH;
  for (const parser of PARSERS) {
    const score = parser.detect(text, program);
    if (score > bestScore) {
      best = parser;
      bestScore = score;
    }
  }
  return best;
}

/** The interface `text` describes, read by its family's parser (or `style`'s when given). */
export function parseHelp(text: string, program: string, style?: HelpStyle): HelpModel {
  return parserFor(text, program, style).parse(text, program);
}

export type * from './model.js';
