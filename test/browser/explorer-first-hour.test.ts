/**
 * The explorer on the queries a new user writes in the first hour (issue 26), in Chromium at
 * 1280×800 against the real service: per-minute per-status counts, a nested record opened, usage
 * per interval, LQL as typed, a time range, a result cut at the row cap, saving a sandboxable
 * endpoint. Checked by layout metrics (widths within the viewport, series and legend), not only by
 * text; screenshots land in test/browser/output/first-hour-*.png.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { PRIVATE_TOKEN, type TestServer, startTestServer } from '../support/server.ts';
import { entryArgs, repoRoot } from '../support/repo.ts';
import { launchChromium, screenshotPath } from './chromium.ts';

const TIME_ZONE = 'Asia/Kolkata';
const VIEWPORT = { width: 1280, height: 800 };
const BASE_MS = Date.UTC(2026, 10, 21, 10, 0, 0);
const MINUTES = 30;
/** 19 status codes: 200 in every minute, the others now and then. */
const STATUSES = [200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 409, 422, 429, 500, 502, 503, 504];
const RECENT = 30;

interface Edge {
  timestamp: string;
  status: number;
  path: string;
}

function edgeEvent(e: Edge, i: number) {
  return {
    id: `edge-${i}`,
    timestamp: e.timestamp,
    project: 'default',
    event_message: `GET ${e.path}?select=*&order=created_at.desc&limit=50 ${e.status}: answered for a browser in eu-west-2 after a cache miss at the edge`,
    metadata: {
      request: {
        method: 'GET',
        path: e.path,
        url: `https://default.supabase.example/${e.path}?select=*&order=created_at.desc&limit=50&offset=0&apikey_hint=anon`,
        headers: {
          user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
          cf_ray: `8f1c2b3a4d5e6f70-FRA-${i}`,
        },
      },
      response: { status_code: e.status, headers: { content_type: 'application/json; charset=utf-8', cache_status: 'MISS' } },
    },
  };
}

/** A fixed half hour a week back, with a count per minute and status that varies, and the last 50 minutes. */
function events() {
  const fixed: Edge[] = [];
  for (let m = 0; m < MINUTES; m++) {
    const at = new Date(BASE_MS + m * 60_000 + 5_000).toISOString();
    for (let n = 0; n < 6 + (m % 4); n++) fixed.push({ timestamp: at, status: 200, path: '/rest/v1/todos' });
    STATUSES.slice(1).forEach((status, k) => {
      if ((m + k) % 3 === 0) fixed.push({ timestamp: at, status, path: '/rest/v1/todos' });
    });
  }
  const now = Date.now();
  const recent: Edge[] = Array.from({ length: RECENT }, (_, i) => ({
    timestamp: new Date(now - (i + 1) * 90_000).toISOString(),
    status: i % 6 === 0 ? 503 : 200,
    path: '/rest/v1/recent',
  }));
  return [...fixed, ...recent].map(edgeEvent);
}

const PER_STATUS = `select timestamp_trunc(t.timestamp, minute) as minute, r.status_code, count(*) as count
from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
where t.timestamp < timestamp '2026-11-22' and r.status_code in (200, 404, 500)
group by minute, r.status_code
order by minute, r.status_code`;

const PER_STATUS_TEXT = `select timestamp_trunc(t.timestamp, minute) as minute, cast(r.status_code as string) as status, count(*) as n
from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
where t.timestamp < timestamp '2026-11-22'
group by minute, status
order by minute, status`;

const browser = await launchChromium({ timezoneId: TIME_ZONE, viewport: VIEWPORT });

if ('skip' in browser) {
  test('the explorer’s first hour in Chromium', { skip: browser.skip }, () => {});
} else {
  describe('the explorer’s first hour in Chromium, 1280×800', () => {
    let s: TestServer;
    let page: Page;
    const problems: string[] = [];
    const bodies: Record<string, unknown>[] = [];
    let fixedCount = 0;

    before(async () => {
      s = await startTestServer();
      const all = events();
      fixedCount = all.length - RECENT;
      const ingest = await s.fetch('/api/logs?source_name=cloudflare.logs.prod', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(all),
      });
      assert.equal(ingest.status, 200, await ingest.text());
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.url });
      page = await browser.context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
      });
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().includes('/api/endpoints/query/')) bodies.push(JSON.parse(r.postData() ?? '{}'));
      });
      await page.goto(`${s.url}/`);
      await page.fill('#token-input', PRIVATE_TOKEN);
      await page.click('#sign-in-form button[type=submit]');
      await page.locator('#workspace:not([hidden])').waitFor();
    });

    after(async () => {
      await browser.close();
      await s?.close();
    });

    const text = (selector: string) => page.locator(selector).innerText();
    const legend = () => page.locator('#chart .u-legend .u-series .u-label').allInnerTexts();
    const runQuery = async () => {
      await page.click('#run');
      await page.locator('#query-form[aria-busy="false"]').waitFor({ state: 'attached' });
    };
    const choose = async (name: string) => {
      await page.click(`#endpoint-list [data-endpoint="${name}"]`);
      await page.locator('#endpoint-name', { hasText: name }).waitFor();
    };
    /** A viewport shot (1280×800) with the results scrolled to the top of the window. */
    const shot = async (name: string, scrollTo = '#results') => {
      await page.locator(scrollTo).evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: screenshotPath(name) });
    };
    const rect = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((e) => {
          const r = e.getBoundingClientRect();
          return { left: r.left, right: r.right, width: r.width, height: r.height, top: r.top };
        });
    const pageWidth = async () => Number(await page.evaluate('document.documentElement.scrollWidth'));

    test('per-minute counts per status code: one line per status, the code never drawn as a measure', async () => {
      await page.fill('#editor', PER_STATUS);
      await runQuery();
      await page.locator('#chart .uplot').waitFor();
      assert.deepEqual(await legend(), ['minute', '200', '404', '500']);
      assert.match(await text('#chart .u-title'), /^count by status_code over minute/);
      assert.equal(await page.locator('#chart .u-legend .u-series').count(), 4, 'the time and three series');
      await shot('first-hour-1-per-minute-per-status');
    });

    test('a text status with 19 values: the 7 largest and “other”, said in a note, never one zig-zag line', async () => {
      await page.fill('#editor', PER_STATUS_TEXT);
      await runQuery();
      await page.locator('#chart .u-title', { hasText: 'n by status' }).waitFor();
      const labels = await legend();
      assert.equal(labels.length, 9, labels.join(', '));
      assert.equal(labels[1], '200', 'the largest first');
      assert.equal(labels.at(-1), 'other');
      assert.match(await text('#chart-note'), /status has 19 values: the 7 largest are drawn, the other 12 summed as “other”/);
      await shot('first-hour-1b-status-as-text-top-7');
    });

    test('opening a nested record keeps the table’s shape; the side panel shows it whole and copies the row as JSON', async () => {
      await choose('logs.all');
      await page.fill('#editor', '');
      await runQuery();
      await page.locator('#result-table > tbody > tr').first().waitFor();
      const before = await rect('#result-table');
      assert.ok(before.right <= VIEWPORT.width, `table right edge ${before.right}`);
      const message = await rect('#result-table > tbody > tr:first-child > td.long');
      assert.ok(message.width >= 220, `event_message is ${message.width}px wide`);
      assert.ok(message.height <= 6 * 20, `event_message takes ${message.height}px: a few lines, not a word per line`);

      await page.locator('#result-table > tbody > tr').first().locator('button.record-open').click();
      await page.locator('#record-panel:not([hidden])').waitFor();
      // The record clicked is open all the way down.
      await page.locator('#record-body details.record[open] th', { hasText: 'user_agent' }).waitFor();
      assert.equal(await page.locator('#record-body details.record:not([open])').count(), 0);

      const afterOpen = await rect('#result-table');
      assert.deepEqual({ ...afterOpen, top: 0 }, { ...before, top: 0 }, 'the table kept its width, height and place');
      assert.ok((await pageWidth()) <= VIEWPORT.width, 'the page does not scroll sideways');
      const panel = await rect('#record-panel');
      assert.ok(panel.left >= 0 && panel.right <= VIEWPORT.width, `panel ${panel.left}–${panel.right}`);
      await shot('first-hour-2-nested-record-open', '#results');
      const overflow = await page.locator('#record-body').evaluate((e) => e.scrollWidth - e.clientWidth);
      assert.ok(overflow <= 1, `nested values are cut off by ${overflow}px`);
      const cut = await page
        .locator('#record-body td')
        .evaluateAll((tds, right) => tds.filter((td) => td.getBoundingClientRect().right > (right as number) + 1).length, panel.right);
      assert.equal(cut, 0, 'no nested value runs past the panel');
      assert.match(await text('#record-body'), /user_agent\s+Mozilla\/5\.0/);
      await shot('first-hour-2-nested-record-open', '#results');

      await page.click('#record-copy');
      await page.locator('#record-status', { hasText: 'Copied' }).waitFor();
      const copied = JSON.parse(String(await page.evaluate('navigator.clipboard.readText()')));
      assert.equal(copied.id, `edge-${fixedCount}`, 'the newest row');
      assert.equal(copied.metadata[0].response[0].status_code, 503);
      await page.keyboard.press('Escape');
      assert.ok(await page.locator('#record-panel').isHidden());
    });

    test('columns resize by dragging a header edge, inside the table’s frame', async () => {
      const th = page.locator('#result-table th[data-column="event_message"]');
      await th.scrollIntoViewIfNeeded();
      const before = await th.evaluate((e) => e.getBoundingClientRect().width);
      const handle = await th.locator('.col-resize').boundingBox();
      assert.ok(handle);
      await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
      await page.mouse.down();
      await page.mouse.move(handle.x + 150, handle.y + handle.height / 2, { steps: 5 });
      await page.mouse.up();
      const after = await th.evaluate((e) => e.getBoundingClientRect().width);
      assert.ok(Math.abs(after - before - 150) <= 4, `${before} → ${after}`);
      const frame = await rect('.table-wrap');
      assert.ok(frame.right <= VIEWPORT.width, 'the frame stays in the window; the table scrolls inside it');
      assert.ok((await pageWidth()) <= VIEWPORT.width);
    });

    test('the time range sets @iso_timestamp_start / @iso_timestamp_end: presets and a custom range', async () => {
      assert.equal(await page.getAttribute('#param-iso_timestamp_start', 'type'), 'datetime-local');
      await page.selectOption('#time-range', '1h');
      bodies.length = 0;
      await runQuery();
      await page.locator('#result-meta', { hasText: `${RECENT} rows` }).waitFor();
      const sent = bodies.at(-1) as Record<string, string>;
      const start = Date.parse(sent.iso_timestamp_start ?? '');
      assert.ok(Math.abs(Date.now() - 3600_000 - start) < 120_000, `start ${sent.iso_timestamp_start}`);
      assert.ok(sent.iso_timestamp_end?.endsWith('Z'));

      // 10:10Z to 10:13Z is 15:40 to 15:43 in Kolkata: three minutes of the fixed half hour.
      await page.selectOption('#time-range', 'custom');
      await page.fill('#param-iso_timestamp_start', '2026-11-21T15:40:00');
      await page.fill('#param-iso_timestamp_end', '2026-11-21T15:43:00');
      await runQuery();
      const custom = bodies.at(-1) as Record<string, string>;
      assert.equal(custom.iso_timestamp_start, '2026-11-21T10:10:00Z');
      assert.equal(custom.iso_timestamp_end, '2026-11-21T10:13:00Z');
      const expected = events().filter((e) => e.timestamp > '2026-11-21T10:10:00Z' && e.timestamp <= '2026-11-21T10:13:00Z').length;
      assert.ok(expected > 20 && expected < 100, `${expected} rows, under logs.all's LIMIT 100`);
      assert.match(await text('#result-meta'), new RegExp(`^${expected} rows`));
      await page.selectOption('#time-range', '');
    });

    test('LQL: the placeholder and examples run as typed; no f: reads the first CTE and says so; rows say which requests failed', async () => {
      await page.click('.segmented label:has-text("LQL")');
      const placeholder = (await page.getAttribute('#editor', 'placeholder')) ?? '';
      assert.match(placeholder, /^e\.g\. f:edge_logs /);
      await page.fill('#editor', placeholder.replace(/^e\.g\. /, ''));
      await runQuery();
      assert.ok(await page.locator('#error').isHidden(), await text('#error').catch(() => ''));
      const examples = await page.locator('#lql-examples button.example').allInnerTexts();
      assert.ok(examples.length >= 2);
      for (let i = 0; i < examples.length; i++) {
        await page.locator('#lql-examples button.example').nth(i).click();
        await runQuery();
        assert.ok(await page.locator('#error').isHidden(), `${examples[i]}: ${await text('#error').catch(() => '')}`);
      }

      await page.fill('#editor', 'm.response.status_code:>=500');
      await runQuery();
      assert.ok(await page.locator('#error').isHidden(), await text('#error').catch(() => ''));
      assert.match(await text('#lql-note'), /read edge_logs, the endpoint's first CTE.*postgres_logs/);
      const head = await page.locator('#result-table thead th[data-column]').evaluateAll((ths) => ths.map((th) => th.getAttribute('data-column')));
      assert.deepEqual(head, ['timestamp', 'id', 'event_message', 'metadata_response_status_code']);
      // Status codes are categories: rows per bucket stacked by code, not a flat line near 500.
      await page.locator('#chart .u-title', { hasText: 'by metadata_response_status_code' }).waitFor();
      assert.deepEqual(await legend(), ['timestamp', '500', '502', '503', '504']);
      await shot('first-hour-4-lql-failed-requests');
      await page.click('.segmented label:has-text("SQL")');
    });

    test('usage.api-counts: @interval is a choice of minutely, hourly, daily; an empty one says what to choose', async () => {
      await choose('usage.api-counts');
      assert.equal(await page.evaluate("document.getElementById('param-interval')?.tagName"), 'SELECT');
      assert.deepEqual(await page.locator('#param-interval option').allInnerTexts(), ['(not sent)', 'minutely', 'hourly', 'daily']);
      assert.equal(await page.inputValue('#param-interval'), 'minutely');
      await page.fill('#editor', '');
      await runQuery();
      await page.locator('#chart .uplot').waitFor();
      const labels = await legend();
      assert.ok(labels.includes('total_rest_requests'), labels.join(', '));
      const rows = await page.locator('#result-table > tbody > tr').count();
      assert.ok(rows >= 20, `${rows} minutes`);
      await shot('first-hour-3-usage-per-interval', '#params');

      await page.selectOption('#param-interval', 'hourly');
      await runQuery();
      assert.equal(((bodies.at(-1) ?? {}) as Record<string, string>).interval, 'hourly');
      await page.selectOption('#param-interval', '');
      await runQuery();
      await page.locator('#result-table caption').waitFor();
      assert.match(await text('#result-table caption'), /No rows\.\s+@interval was not sent: choose one of minutely, hourly, daily\./);
      await page.selectOption('#param-interval', 'minutely');
    });

    test('the chart says when the row cap cut the result', async () => {
      const created = await s.fetch('/api/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'edge.capped',
          sandboxable: true,
          max_limit: 50,
          query:
            'with edge_logs as (select t.timestamp, t.id, t.event_message from `cloudflare.logs.prod` t) select timestamp, id from edge_logs order by timestamp',
        }),
      });
      assert.equal(created.status, 201, await created.text());
      await page.reload();
      await page.locator('#workspace:not([hidden])').waitFor();
      await choose('edge.capped');
      await runQuery();
      await page.locator('#chart .uplot').waitFor();
      assert.match(await text('#result-meta'), /^50 rows/);
      assert.ok(await page.locator('#chart-note.warn').isVisible());
      assert.match(
        await text('#chart-note'),
        /Cut at the row cap: the query returned max_limit = 50 rows, so the chart covers only 2026-11-21 15:30 to 2026-11-21 15:3\d/,
      );
      await shot('first-hour-5-row-cap');
    });

    test('the save dialog offers sandboxing; /stats takes a name', async () => {
      await choose('logs.all');
      await page.fill('#editor', PER_STATUS);
      await page.click('#save-open');
      await page.locator('#save-dialog[open]').waitFor();
      assert.equal(await page.isChecked('#save-sandboxable'), false, 'off by default, as in the API');
      await page.fill('#save-name', 'edge.by-status');
      await page.check('#save-sandboxable');
      await page.click('#save-confirm');
      await page.locator('#endpoint-name', { hasText: 'edge.by-status' }).waitFor();
      assert.ok(await page.locator('#editor').isVisible(), 'a sandboxable endpoint takes a query of one’s own');
      const list = (await (await s.fetch('/api/endpoints')).json()) as { name: string; sandboxable: boolean; id: string }[];
      const saved = list.find((e) => e.name === 'edge.by-status');
      assert.equal(saved?.sandboxable, true);

      const byName = await s.fetch('/api/endpoints/logs.all/stats');
      assert.equal(byName.status, 200, await byName.clone().text());
      const logsAll = list.find((e) => e.name === 'logs.all');
      assert.equal(((await byName.json()) as { endpoint_id: string }).endpoint_id, logsAll?.id);
      assert.equal((await s.fetch('/api/endpoints/no.such.endpoint/stats')).status, 404);
    });

    test('`npm run demo` finds the service by PORT and HOST, as `npm start` reads them', async () => {
      const port = new URL(s.url).port;
      const env: NodeJS.ProcessEnv = { ...process.env, PORT: port, HOST: '127.0.0.1', DATA_DIR: s.dataDir, LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN };
      delete env.QUARRY_URL;
      const child = spawn(process.execPath, [...entryArgs('scripts/demo-load.ts'), '--events', '40', '--project', 'demo-port'], {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, out);
      assert.match(out, new RegExp(`into http://127\\.0\\.0\\.1:${port} `));
      assert.match(out, /logs\.all now returns \d+ rows for project "demo-port"/);
    });

    test('the page raised no errors', () => {
      assert.deepEqual(problems, []);
    });
  });
}
