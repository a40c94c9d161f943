// Opening the authorization URL in the user's browser (R14.4): the platform's opener, detached;
// whether it started is all we learn, so the URL is always printed as well.
import { spawn } from 'node:child_process';

const OPENERS: Readonly<Record<string, readonly string[]>> = {
  darwin: ['open'],
  win32: ['cmd', '/c', 'start', '""'],
};

/** Starts the browser on `url`; false when no opener could be started. */
export function openBrowser(url: string): Promise<boolean> {
  const [command = 'xdg-open', ...args] = OPENERS[process.platform] ?? ['xdg-open'];
  return new Promise((resolve) => {
    try {
      const child = spawn(command, [...args, url], { detached: true, stdio: 'ignore' });
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
