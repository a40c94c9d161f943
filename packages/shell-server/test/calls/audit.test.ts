// NFR4.3: the audit line of an execution stays small whatever the command: argv is capped per word
// and in total, the elision is marked in place, and a SHA-256 of the full argv keeps the exact
// command identifiable.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it, readLog, structured, type CommandResult, type Scope } from '../support/harness.js';

/** The documented fingerprint: SHA-256 of every word's UTF-8 followed by a NUL (as /proc/PID/cmdline). */
function fingerprint(argv: readonly string[]): string {
  const hash = createHash('sha256');
  for (const word of argv) hash.update(`${word}\0`, 'utf8');
  return hash.digest('hex');
}

/** The raw log line and the parsed audit object of one operation. */
async function auditOf(scope: Scope, operation: string) {
  const log = await readLog(scope);
  const index = log.lines.findIndex(
    (line) =>
      line['msg'] === 'execution' &&
      (line['audit'] as { operation: string }).operation === operation,
  );
  const raw = log.text.split('\n').filter((line) => line.trim() !== '')[index] ?? '';
  return { raw, audit: log.lines[index]?.['audit'] as Record<string, unknown> };
}

describe.concurrent('audit line size (NFR4.3)', { timeout: 60_000 }, () => {
  it('NFR4.3: a 9 MiB sandboxed_shell script is audited capped, marked as elided, with the SHA-256 of the full argv', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope, ['--sync']);
    const script = `#${'x'.repeat(9 * 1024 * 1024)}\necho audited-tail`;
    const result = structured<CommandResult>(
      await server.call('sandboxed_shell', { command: script }),
    );
    expect(result).toMatchObject({ status: 'completed', output: 'audited-tail\n' });
    await server.close();
    const { raw, audit } = await auditOf(scope, result.operation_id);
    expect(raw.length).toBeLessThan(16 * 1024);
    const argv = audit['argv'] as string[];
    // The argv that really ran: bash without startup files (issue 12: not a shortened `bash -c`).
    expect(argv.slice(0, 4)).toEqual(['bash', '--noprofile', '--norc', '-c']);
    // Head and tail of the script survive around a marker saying how much was left out.
    expect(argv[4]).toMatch(/^#x{100}/);
    expect(argv[4]).toMatch(/…\[\d+ chars elided\]…/);
    expect(argv[4]).toMatch(/echo audited-tail$/);
    expect(audit).toMatchObject({
      tool: 'sandboxed_shell',
      argv_elided: true,
      argv_sha256: fingerprint(['bash', '--noprofile', '--norc', '-c', script]),
      status: 'completed',
      exit_code: 0,
    });
  });

  it('NFR4.3: many words are capped in total: the rest is replaced by one marker counting them', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const words = Array.from(
      { length: 200 },
      (_, i) => `w${String(i).padStart(3, '0')}${'z'.repeat(200)}`,
    );
    const result = structured<CommandResult>(await server.call('argv', { words }));
    expect(result.status).toBe('completed');
    await server.close();
    const { raw, audit } = await auditOf(scope, result.operation_id);
    expect(raw.length).toBeLessThan(16 * 1024);
    const argv = audit['argv'] as string[];
    const last = argv.at(-1) ?? '';
    expect(last).toMatch(/^…\[\d+ more words elided\]$/);
    // The command's own 4 words (node -e SCRIPT --) come first, then the kept words verbatim.
    const kept = argv.slice(4, -1);
    expect(kept.length).toBeGreaterThan(10);
    expect(kept).toEqual(words.slice(0, kept.length));
    expect(last).toBe(`…[${String(words.length - kept.length)} more words elided]`);
    expect(audit['argv_elided']).toBe(true);
    expect(audit['argv_sha256']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('NFR4.3: a short argv is logged whole, not marked, with its SHA-256', async ({ e2e }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const ok = structured<CommandResult>(await server.call('e2e_sync', { value: 'small' }));
    await server.close();
    const { audit } = await auditOf(scope, ok.operation_id);
    const argv = ['printf', '%s\\n', 'sync', '--value', 'small'];
    expect(audit).toMatchObject({ argv, argv_elided: false, argv_sha256: fingerprint(argv) });
  });
});

describe.concurrent('hand-off writes in the audit line (R7.11)', { timeout: 60_000 }, () => {
  it('R7.11: a command that makes a hand-off file is audited as a warning naming it', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope, ['--sync']);
    const result = structured<CommandResult>(
      await server.call('sandboxed_shell', { command: 'echo "{}" > .mcp.json' }),
    );
    expect(result.output).toContain('created .mcp.json');
    await server.close();
    const log = await readLog(scope);
    const line = log.lines.find(
      (entry) =>
        entry['msg'] === 'execution' &&
        (entry['audit'] as { operation: string }).operation === result.operation_id,
    );
    expect(line?.['level']).toBe(40);
    expect((line?.['audit'] as Record<string, unknown>)['handoff_writes']).toEqual([
      `created ${join(scope.dir, '.mcp.json')}`,
    ]);
  });
});
