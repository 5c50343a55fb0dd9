/**
 * Headless Chromium for the browser tests: Debian's `chromium` driven by playwright-core (no
 * browser download). When no Chromium is there, `launchChromium` says why, and the tests skip.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots for a person to look at (git-ignored). */
export const OUTPUT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'output');

/** Without the networking flags Chromium keeps calling Google's hosts, which this machine refuses. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  timezoneId: string;
  viewport: { width: number; height: number };
}

/** A fresh profile each time; `{skip}` when there is no Chromium to drive. */
export async function launchChromium(options: LaunchOptions): Promise<Browser | { skip: string }> {
  if (!existsSync(CHROMIUM_PATH)) {
    return { skip: `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)` };
  }
  const profile = await mkdtemp(path.join(tmpdir(), 'quarry-chromium-'));
  await mkdir(OUTPUT_DIR, { recursive: true });
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: FLAGS,
      timezoneId: options.timezoneId,
      locale: 'en-GB',
      viewport: options.viewport,
    });
    return {
      context,
      async close() {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (e) {
    // A Chromium that is there but does not start is a failure, not a reason to skip.
    await rm(profile, { recursive: true, force: true });
    throw e;
  }
}

export function screenshotPath(name: string): string {
  return path.join(OUTPUT_DIR, `${name}.png`);
}
