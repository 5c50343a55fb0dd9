import { chromium } from 'playwright-core';
import { mkdtempSync, readFileSync } from 'node:fs';
const token = readFileSync('/tmp/qfresh/data/private-access-token', 'utf8').trim();
const ctx = await chromium.launchPersistentContext(mkdtempSync('/tmp/pwud-'), { executablePath: '/usr/bin/chromium', headless: true, viewport: {width: 1440, height: 1000}, args: ['--no-sandbox','--disable-gpu','--disable-quic','--no-first-run','--disable-background-networking','--disable-component-update','--disable-sync'] });
const p = await ctx.newPage();
await p.goto('http://127.0.0.1:4000/');
await p.fill('#token-input', token);
await p.click('#sign-in-form button[type=submit]');
await p.waitForSelector('#endpoint-view:not([hidden])');
for (const sql of ['select id, timestamp, event_message, metadata from edge_logs limit 1000', 'select id, timestamp, event_message, metadata from postgres_logs limit 1000']) {
  await p.fill('#editor', sql);
  const t0 = Date.now();
  await p.click('#run');
  await p.waitForSelector('#result-meta >> text=/1000 rows/');
  await p.evaluate(() => new Promise(r => requestAnimationFrame(() => r(null))));
  console.log(sql.slice(0, 60), Date.now() - t0, 'ms', (await p.locator('#result-meta').innerText()).replace(/\n/g,' · '));
}
await ctx.close();
