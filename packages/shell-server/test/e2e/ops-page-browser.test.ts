// The operations page in a real browser (SPEC §15 operations page): Debian's Chromium, headless,
// driven by playwright-core, against the built `ahma-shell --mode stdio --ops-page` that an MCP
// client (the SDK's, over stdio) gives commands. What the person sees: a running command with its
// live output, its end with the exit code, a cancel that kills it (checked in /proc), output that
// is shown as text however it is written; what a stranger gets: nothing without the cookie, and
// no change from another origin's page. A screenshot is kept (test-results/ops-page.png).
//
// Without Chromium the file is skipped, unless AHMA_REQUIRE_BROWSER=1 (.ci/run installs Chromium
// and sets it), where a missing browser fails instead.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import {
  it,
  exists,
  PACKAGE_DIR,
  structured,
  waitFor,
  type E2E,
  type RunningServer,
} from '../support/harness.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) =>
  existsSync(path),
);
if (CHROMIUM === undefined && process.env['AHMA_REQUIRE_BROWSER'] === '1') {
  throw new Error('AHMA_REQUIRE_BROWSER=1 but no Chromium (apt-get install chromium)');
}
const SCREENSHOT = join(PACKAGE_DIR, 'test-results', 'ops-page.png');

/** A stdio server with its page, and the page's origin and one-time link. */
async function serverWithPage(
  e2e: E2E,
): Promise<{ server: RunningServer; origin: string; link: string }> {
  const scope = await e2e.scope({ noTools: true });
  const server = await e2e.server(scope, ['--ops-page', '--inline-wait', '0']);
  const link = await waitFor(() => /one-time link\): (\S+)/.exec(server.stderr())?.[1], 'the link');
  return { server, origin: new URL(link).origin, link };
}

/** Starts a command through MCP, as an agent does; its operation id. */
async function start(server: RunningServer, command: string): Promise<string> {
  const result = await server.call('sandboxed_shell', {
    command,
    execution_mode: 'AsyncResultPush',
  });
  const { operation_id: id } = structured<{ operation_id: string }>(result);
  return id;
}

const statusOf = (page: Page, id: string) => page.locator(`tr[data-id="${id}"] td.status`);

describe.skipIf(CHROMIUM === undefined)(
  'the operations page in Chromium (SPEC §15 operations page)',
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM ?? 'chromium', headless: true });
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('SPEC §15 operations page: a running command appears with its live output, ends with its exit code, and what it prints stays text', async ({
      e2e,
    }) => {
      const { server, link } = await serverWithPage(e2e);
      const page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
      await page.goto(link);
      expect(new URL(page.url()).pathname).toBe('/ops');
      await page.locator('#connection[data-state="open"]').waitFor();

      // Output a command controls: markup and a script, which must show as the characters they are.
      const payload = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
      const id = await start(
        server,
        `echo '${payload}'; for i in 1 2 3 4 5 6; do echo "tick $i"; sleep 0.3; done; exit 3`,
      );
      await expect.poll(() => statusOf(page, id).textContent()).toBe('running');
      await page.locator(`tr[data-id="${id}"]`).click();
      await page.locator('#output', { hasText: 'tick 2' }).waitFor();
      expect(await page.locator(`tr[data-id="${id}"] td.command`).textContent()).toContain(
        'tick $i',
      );

      await expect
        .poll(() => statusOf(page, id).textContent(), { timeout: 15_000 })
        .toBe('failed (exit 3)');
      await page.locator('#output', { hasText: 'tick 6' }).waitFor();
      expect(await page.locator('#output').textContent()).toContain(payload);
      expect(await page.locator('#output script, #output img, body > img').count()).toBe(0);
      expect(
        await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).toBeUndefined();

      // The whole output, through the same reader as the `output` tool.
      await page.locator('#full-output').click();
      await expect
        .poll(() => page.locator('#output').textContent())
        .toMatch(/^<script>.*tick 6\n/s);
      // A second command still running, for the picture.
      await start(
        server,
        'for i in $(seq 1 100); do echo "building step $i of 100"; sleep 0.2; done',
      );
      await page.locator('td.status', { hasText: 'running' }).waitFor();
      await mkdir(join(PACKAGE_DIR, 'test-results'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      await page.close();
    });

    it('SPEC §15 operations page: cancel on the page kills the command (gone from /proc)', async ({
      e2e,
    }) => {
      const { server, link } = await serverWithPage(e2e);
      const page = await browser.newPage();
      await page.goto(link);
      const id = await start(server, 'echo "pid $$"; exec sleep 300');
      await page.locator(`tr[data-id="${id}"]`).click();
      const output = await page.locator('#output', { hasText: /pid \d+/ });
      await output.waitFor();
      const pid = Number(/pid (\d+)/.exec((await output.textContent()) ?? '')?.[1]);
      expect(exists(pid)).toBe(true);
      await page.locator(`tr[data-id="${id}"] button.cancel`).click();
      await waitFor(() => !exists(pid), 'the command to be gone');
      await expect.poll(() => statusOf(page, id).textContent()).toMatch(/^cancelled/);
      await page.close();
    });

    it('SPEC §15 operations page: no cookie, no page; another origin’s page can neither read nor cancel', async ({
      e2e,
    }) => {
      const { server, origin, link } = await serverWithPage(e2e);
      const stranger = await browser.newContext();
      const refused = await (await stranger.newPage()).goto(`${origin}/ops`);
      expect(refused?.status()).toBe(401);
      await stranger.close();

      // Signed in, then visiting a page on another port of this machine (the same site, another
      // origin) that tries to read the list and to cancel a running command.
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(link);
      const id = await start(server, 'exec sleep 300');
      await expect.poll(() => statusOf(page, id).textContent()).toBe('running');
      const evil = await evilSite(e2e, origin, id);
      const attack = await context.newPage();
      await attack.goto(evil);
      const outcome = await attack.waitForFunction(
        () => (globalThis as { outcome?: string }).outcome,
        undefined,
        {
          timeout: 10_000,
        },
      );
      const { read, cancel } = JSON.parse(String(await outcome.jsonValue())) as {
        read: string;
        cancel: string;
      };
      expect(read).toMatch(/^(error|status 403)/);
      expect(cancel).toMatch(/^(error|status 403|opaque)/);
      expect(await statusOf(page, id).textContent()).toBe('running');
      const [still] = await server.client
        .callTool({ name: 'status', arguments: { ids: [id] } })
        .then(
          (result) => structured<{ operations: { status: string }[] }>(result as never).operations,
        );
      expect(still?.status).toBe('running');
      await context.close();
    });
  },
);

/** A page on another loopback port that tries the page's API with the browser's cookie. */
async function evilSite(e2e: E2E, origin: string, id: string): Promise<string> {
  const script = `
    const result = {};
    fetch(${JSON.stringify(`${origin}/ops/api/operations`)}, { credentials: 'include' })
      .then((r) => (result.read = 'status ' + r.status), (e) => (result.read = 'error ' + e))
      .then(() => fetch(${JSON.stringify(`${origin}/ops/api/cancel`)}, {
        method: 'POST', mode: 'no-cors', credentials: 'include',
        headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ id: ${JSON.stringify(id)} }),
      }))
      .then((r) => (result.cancel = r.type === 'opaque' ? 'opaque' : 'status ' + r.status), (e) => (result.cancel = 'error ' + e))
      .then(() => { window.outcome = JSON.stringify(result); });`;
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(`<!doctype html><title>elsewhere</title><script>${script}</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  e2e.onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`;
}
