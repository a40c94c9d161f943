// Opening the authorization URL in the user's browser (R14.4): the platform's opener, detached;
// whether it started is all we learn, so the URL is always printed as well.
import { spawn } from 'node:child_process';

const OPENERS: Readonly<Record<string, string>> = { darwin: 'open', linux: 'xdg-open' };

/**
 * Starts the browser on `url`; false when it was not started. Only http(s) URLs are opened (the
 * URL comes from a server's metadata: another scheme could start any handler), and only where the
 * opener takes the URL as one argument (Windows' `start` goes through cmd, which would split it).
 */
export function openBrowser(url: string): Promise<boolean> {
  const command = OPENERS[process.platform];
  if (command === undefined || !/^https?:\/\//i.test(url)) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
