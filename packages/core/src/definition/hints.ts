// The Rust ahma's `hints` (SPEC §2 compatibility): advice for the agent, shown at the end of every
// tool description of the definition. Bounded, because every tool of the file repeats them and
// clients keep descriptions in the model's context.
import type { Hints } from './schema.js';

/** Most characters the hints add to one description, marker included. */
export const MAX_HINTS_LENGTH = 500;
const CUT_MARKER = ' […]';

/** "Hints: build: …; test: …; <custom topic>: …", cut cleanly at MAX_HINTS_LENGTH. */
export function describeHints(hints: Hints): string {
  const entries: [string, string][] = [];
  for (const key of ['build', 'test', 'dependencies', 'clean', 'run'] as const) {
    const text = hints[key];
    if (typeof text === 'string') entries.push([key, text]);
  }
  for (const [topic, text] of Object.entries(hints.custom ?? {})) {
    if (typeof text === 'string') entries.push([topic, text]);
  }
  if (entries.length === 0) return '';
  const full = `Hints:\n${entries.map(([topic, text]) => `- ${topic}: ${text.trim()}`).join('\n')}`;
  return cut(full, MAX_HINTS_LENGTH);
}

/** At most `max` characters: whole words, then the marker. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - CUT_MARKER.length);
  const space = room.search(/\s\S*$/);
  return `${(space > 0 ? room.slice(0, space) : room).trimEnd()}${CUT_MARKER}`;
}
