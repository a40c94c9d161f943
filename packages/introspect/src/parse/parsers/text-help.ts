// Small readings every family needs: the lines of a help, its one-line description.
import { firstSentence } from './text-options.js';

export function helpLines(text: string): string[] {
  return text.replace(/\r\n?/g, '\n').split('\n');
}

/** Lines that are not prose: usage, headings, options, banners (`ripgrep 13.0.0`), examples. */
function isProse(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed === '' || /^\s/.test(line)) return false;
  if (/^(?:usage|or):/i.test(trimmed) || trimmed.endsWith(':')) return false;
  if (/^-/.test(trimmed)) return false;
  return /^[A-Za-z'"]/.test(trimmed);
}

const BANNER = /^\S+\s+(?:version\s+)?v?\d+(?:\.\d+)+/;
const LEGAL = /copyright|warranty|licen[cs]e/i;

/**
 * The program's one-line description: the first prose line of the first paragraphs (`Rust's
 * package manager`, grep's `Search for PATTERNS in each FILE.` under its usage), before any
 * heading or option line. A `name version` banner paragraph and legal notices are skipped.
 */
export function helpDescription(lines: readonly string[]): string | undefined {
  const paragraphs: string[][] = [[]];
  for (const line of lines) {
    if (line.trim() === '') paragraphs.push([]);
    else paragraphs[paragraphs.length - 1]?.push(line);
  }
  for (const [index, paragraph] of paragraphs.entries()) {
    if (paragraph.length === 0) continue;
    if (index === 0 && BANNER.test(paragraph[0] ?? '')) continue;
    if (LEGAL.test(paragraph.join(' '))) continue;
    const at = paragraph.findIndex(isProse);
    if (at >= 0) {
      // A sentence wrapped over the following lines of the paragraph is read whole.
      const rest = paragraph.slice(at + 1).filter((line) => !/^\s/.test(line));
      const prose = [paragraph[at] ?? '', ...rest].join(' ');
      // jq: `jq - commandline JSON processor [version 1.6]`.
      return firstSentence(prose.replace(/^\S+ - /, '').replace(/\s*\[version [^\]]*\]$/, ''));
    }
    if (paragraph.some((line) => line.trim().endsWith(':') || /^\s*-/.test(line))) return undefined;
  }
  return undefined;
}

/** The section headings of a help and the lines under each (`Options:`, `Commands:`, `ARGS:`). */
export function sections(lines: readonly string[]): { heading: string; lines: string[] }[] {
  const result: { heading: string; lines: string[] }[] = [{ heading: '', lines: [] }];
  for (const line of lines) {
    const heading = /^([A-Za-z][\w ,()'/-]*):\s*$/.exec(line);
    if (heading !== null) result.push({ heading: heading[1] ?? '', lines: [] });
    else result[result.length - 1]?.lines.push(line);
  }
  return result;
}
