/**
 * The web explorer in a real browser (Debian's Chromium through playwright-core) against the real
 * service: sign in, browse a source's fields, run the saved query and SQL/LQL of one's own, see
 * rows and a chart, see errors with their position, save a query as an endpoint. Screenshots land
 * in test/browser/output/ for a person to look at.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { PRIVATE_TOKEN, PUBLIC_TOKEN, type TestServer, startTestServer } from '../support/server.ts';
import { launchChromium, screenshotPath } from './chromium.ts';

/** UTC+05:30 all year: a zone where a wrong offset or a UTC fallback cannot pass by luck. */
const TIME_ZONE = 'Asia/Kolkata';
const BASE_MS = Date.UTC(2026, 10, 21, 10, 0, 0);
const EVENTS = 40;

/** 40 edge events of project "default", one every 30 s from 10:00Z; every fifth a 500. */
function edgeEvents(project: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    timestamp: new Date(BASE_MS + i * 30_000).toISOString(),
    project,
    event_message: `GET /rest/v1/items/${i % 3} ${i % 5 === 0 ? 500 : 200}`,
    metadata: {
      labels: ['edge', 'eu'],
      request: { method: 'GET', path: `/rest/v1/items/${i % 3}`, headers: { user_agent: 'browser-test' } },
      response: { status_code: i % 5 === 0 ? 500 : 200 },
    },
  }));
}

/** Values are text, never markup: this must show as written and run nothing. */
const MARKUP = '<img src=x onerror="window.__pwned=1"><b>bold</b>';

/** A saved query with typed parameters (and one, @note, left untyped). */
const TYPED_SQL = `select t.timestamp, t.event_message, @kind as kind
from \`cloudflare.logs.prod\` t cross join unnest(t.metadata) m cross join unnest(m.response) r
where t.project = 'default' and (r.status_code >= 500) = @errors and t.timestamp >= @since
  and date(t.timestamp) = @day and (@note is null or t.event_message like @note)
order by t.timestamp`;

const PER_MINUTE_SQL = `select timestamp_trunc(t.timestamp, minute) as minute,
  count(*) as requests,
  countif(r.status_code >= 500) as errors
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.response) as r
group by minute
order by minute`;

const browser = await launchChromium({ timezoneId: TIME_ZONE, viewport: { width: 1360, height: 900 } });

if ('skip' in browser) {
  console.log(`browser tests skipped: ${browser.skip}`);
  test('web explorer in Chromium', { skip: browser.skip }, () => {});
} else {
  describe('web explorer in Chromium', () => {
    let s: TestServer;
    let page: Page;
    const requests: string[] = [];
    const problems: string[] = [];
    const tokensSeen: string[] = [];

    before(async () => {
      s = await startTestServer();
      const ingest = await s.fetch('/api/logs?source_name=cloudflare.logs.prod', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          ...edgeEvents('default', EVENTS),
          ...edgeEvents('other', 5),
          { project: 'markup', event_message: MARKUP, metadata: { note: MARKUP } },
        ]),
      });
      assert.equal(ingest.status, 200, await ingest.text());
      page = await browser.context.newPage();
      page.setDefaultTimeout(15_000);
      page.on('request', (r: Request) => requests.push(r.url()));
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        // Refused tokens and failed queries are expected 4xx responses; anything else is a defect.
        if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
      });
    });

    after(async () => {
      await browser.close();
      await s?.close();
    });

    const shot = (name: string) => page.screenshot({ path: screenshotPath(name), fullPage: true });
    const text = (selector: string) => page.locator(selector).innerText();
    /** Runs the query and waits until this run's rows or error are on the page. */
    const runQuery = async (how: 'click' | 'keys' = 'click') => {
      if (how === 'keys') await page.press('#editor', 'Control+Enter');
      else await page.click('#run');
      await page.locator('#query-form[aria-busy="false"]').waitFor({ state: 'attached' });
    };
    // Playwright's innerText(): rendered text, as a person reads it (CSS case and line breaks).
    const storedToken = () => page.evaluate("localStorage.getItem('quarry.token')");

    test('a refused token is named as such, and so is one without the private scope', async () => {
      await page.goto(`${s.url}/`);
      await page.locator('#sign-in').waitFor();
      await page.fill('#token-input', 'not-a-token');
      await page.click('#sign-in-form button[type=submit]');
      await page.locator('#sign-in-error:not([hidden])').waitFor();
      assert.match(await text('#sign-in-error'), /unknown or has been revoked/);
      await page.fill('#token-input', PUBLIC_TOKEN);
      await page.click('#sign-in-form button[type=submit]');
      await page.locator('#sign-in-error', { hasText: 'private' }).waitFor();
      assert.match(await text('#sign-in-error'), /lacks the "private" scope/);
      await shot('01-sign-in-refused');
      assert.equal(await storedToken(), null);
    });

    test('signing in shows the endpoints and keeps the token in localStorage only', async () => {
      await page.fill('#token-input', PRIVATE_TOKEN);
      await page.click('#sign-in-form button[type=submit]');
      await page.locator('#workspace:not([hidden])').waitFor();
      const names = await page.locator('#endpoint-list .nav-name').allInnerTexts();
      assert.ok(names.includes('logs.all') && names.includes('usage.api-counts'), names.join(', '));
      assert.equal(await storedToken(), PRIVATE_TOKEN);
      // logs.all is chosen first, with its configuration and parameters.
      assert.equal(await text('#endpoint-name'), 'logs.all');
      assert.match(await text('#endpoint-config'), /MAX ROWS\s+1000/i);
      const params = await page.locator('#param-fields input').evaluateAll((xs) => xs.map((x) => x.getAttribute('name')));
      assert.deepEqual(params, ['project', 'iso_timestamp_start', 'iso_timestamp_end']);
      assert.equal(await page.inputValue('#param-project'), 'default');
      assert.match(await page.inputValue('#editor'), /^select id, timestamp, event_message, metadata\s+from edge_logs/);
    });

    test("a source's field tree shows records, lists and scalars from the catalogue", async () => {
      const source = page.locator('details[data-source="cloudflare.logs.prod"]');
      await source.locator('summary').first().click();
      await source.locator('.field-tree').first().waitFor();
      const metadata = source.locator('.field-tree > li', { hasText: 'metadata' }).first();
      assert.match(await metadata.innerText(), /metadata\s+record/);
      await metadata.locator('summary').first().click();
      const request = metadata.locator('li', { hasText: /^request/ }).first();
      await request.locator('summary').first().click();
      assert.match(await request.innerText(), /path\s+string/);
      assert.match(await metadata.innerText(), /labels\s+list<string>/);
      assert.match(await source.innerText(), /timestamp\s+timestamp/);
      await shot('02-source-field-tree');
    });

    test('running the saved query shows the rows, dates in the viewer’s zone, nested records and a chart', async () => {
      await runQuery();
      await page.locator('#results:not([hidden])').waitFor();
      assert.match(await text('#result-meta'), new RegExp(`^${EVENTS} rows`));
      // ICU may name the zone by its older alias.
      assert.match(await text('#result-meta'), /times in Asia\/(Kolkata|Calcutta)/);
      // Newest first: 10:19:30Z is 15:49:30 in Kolkata.
      const firstTime = page.locator('#result-table > tbody > tr').first().locator('time');
      assert.equal(await firstTime.innerText(), '2026-11-21 15:49:30.000');
      assert.equal(await page.locator('#result-table > tbody > tr').count(), EVENTS);
      // The nested record opens in the side panel, all the way down.
      await page.locator('#result-table > tbody > tr').first().locator('button.record-open').click();
      const record = page.locator('#record-body');
      await record.locator('table.nested th', { hasText: 'response' }).waitFor();
      await record.locator('th', { hasText: 'status_code' }).waitFor();
      assert.match(await record.innerText(), /status_code\s+200/);
      await page.click('#record-close');
      // Raw rows with a time column: bars of rows per time bucket, all 40 rows counted.
      await page.locator('#chart .uplot canvas').waitFor();
      assert.match(await text('#chart .u-title'), /rows of this result per/);
      await shot('03-logs-rows-and-chart');
    });

    test('SQL of one’s own: numeric columns over time become chart lines, values in the table', async () => {
      await page.fill('#editor', PER_MINUTE_SQL);
      await runQuery('keys');
      await page.locator('#result-meta', { hasText: '20 rows' }).waitFor();
      const legend = await page.locator('#chart .u-legend .u-series .u-label').allInnerTexts();
      assert.deepEqual(legend, ['minute', 'requests', 'errors']);
      assert.match(await text('#chart .u-title'), /^requests, errors over minute/);
      const first = await page.locator('#result-table > tbody > tr').first().locator('td').allInnerTexts();
      assert.deepEqual(first, ['2026-11-21 15:30:00.000', '2', '1']);
      const second = await page.locator('#result-table > tbody > tr').nth(1).locator('td').allInnerTexts();
      assert.deepEqual(second, ['2026-11-21 15:31:00.000', '2', '0']);
      await shot('04-per-minute-chart');
    });

    test('a long-form result (time, a text column, a count) draws one line per value of the text column', async () => {
      await page.fill(
        '#editor',
        `select timestamp_trunc(t.timestamp, minute) as minute, cast(r.status_code as string) as status, count(*) as n
from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
group by minute, status order by minute, status`,
      );
      await runQuery();
      assert.match(await text('#result-meta'), /^28 rows/); // 20 minutes of 200s, 8 with a 500
      const legend = await page.locator('#chart .u-legend .u-series .u-label').allInnerTexts();
      assert.deepEqual(legend, ['minute', '200', '500']);
      assert.match(await text('#chart .u-title'), /^n by status over minute/);
      await shot('05-long-form-chart');
    });

    test('a DATETIME column (no zone) is charted at the wall-clock time it names', async () => {
      await page.fill(
        '#editor',
        'select datetime(timestamp_trunc(t.timestamp, minute)) as minute, count(*) as requests\nfrom edge_logs t group by minute order by minute',
      );
      await runQuery();
      await page.locator('#chart .u-legend .u-label', { hasText: 'requests' }).waitFor();
      const first = await page.locator('#result-table > tbody > tr').first().locator('td').allInnerTexts();
      assert.deepEqual(first, ['2026-11-21T10:00:00', '2']);
      // uPlot draws its axes on a canvas; its legend names the point under the cursor.
      const plot = await page.locator('#chart .u-over').boundingBox();
      assert.ok(plot);
      await page.mouse.move(plot.x + 2, plot.y + plot.height / 2);
      const legendTime = page.locator('#chart .u-legend .u-series').first().locator('.u-value');
      assert.equal(await legendTime.innerText(), '2026-11-21 10:00:00', "the value's own 10:00, not 15:30 in the viewer's zone");
      assert.doesNotMatch(await text('#result-meta'), /times in/, 'no zone is claimed for zoneless values');
      await page.fill('#editor', PER_MINUTE_SQL);
    });

    test('LQL runs against the same endpoint', async () => {
      await page.click('.segmented label:has-text("LQL")');
      assert.equal(await page.inputValue('#editor'), '');
      await page.fill('#editor', 'f:edge_logs m.response.status_code:>=500 c:count(*) c:group_by(t::minute)');
      await runQuery();
      await page.locator('#result-meta', { hasText: '8 rows' }).waitFor();
      assert.ok(await page.locator('#save-open').isDisabled(), 'LQL cannot be saved as an endpoint');
      await page.click('.segmented label:has-text("SQL")');
      assert.equal(await page.inputValue('#editor'), PER_MINUTE_SQL, 'each language keeps its own text');
    });

    test('errors show the API message and code, and a parse error points at its line and column', async () => {
      await page.fill('#editor', 'select minute,\n  count(* as n\nfrom edge_logs');
      await runQuery();
      await page.locator('#error:not([hidden])').waitFor();
      assert.equal(await text('#error .code'), '400 PARSE_ERROR');
      assert.match(await text('#error .message'), /line 2, column 11/);
      assert.equal(await text('#error .excerpt'), '2 |   count(* as n\n              ^');
      const caret = await page.$eval('#editor', (e) => (e as unknown as { selectionStart: number }).selectionStart);
      assert.equal(caret, 'select minute,\n'.length + 10, 'the editor caret sits on the error');
      assert.ok(await page.locator('#results').isHidden(), 'no stale rows under an error');
      await shot('06-parse-error');

      await page.fill('#editor', 'select id from `postgres.logs`');
      await runQuery();
      await page.locator('#error .code', { hasText: 'QUERY_NOT_ALLOWED' }).waitFor();
      assert.match(await text('#error .message'), /Table not found in CTE: \(postgres\.logs\)/);
      // The endpoint's usage (GET /api/endpoints/:id/stats) follows the runs of this session.
      await page.locator('#endpoint-usage', { hasText: 'QUERY_NOT_ALLOWED' }).waitFor();
      assert.match(await text('#endpoint-usage'), /Last hour: 7 calls · 2 errors · p50 \d+ ms/);
    });

    test('saving a query makes a new endpoint that runs over HTTP', async () => {
      await page.fill('#editor', PER_MINUTE_SQL);
      await page.click('#save-open');
      await page.locator('#save-dialog[open]').waitFor();
      const merged = await page.inputValue('#save-query');
      assert.match(merged, /^with\nedge_logs as \(/);
      assert.ok(merged.trimEnd().endsWith('order by minute'), merged.slice(-200));
      await page.fill('#save-name', 'edge.per-minute');
      await page.fill('#save-description', 'Requests and errors per minute');
      await shot('07-save-dialog');
      await page.click('#save-confirm');
      await page.locator('#notice:not([hidden])').waitFor();
      assert.match(await text('#notice'), /Saved endpoint “edge\.per-minute”/);
      assert.equal(await text('#endpoint-name'), 'edge.per-minute');
      assert.equal(await text('#endpoint-list .active .nav-name'), 'edge.per-minute');
      // Saved without sandboxing (the API's default): no editor, only its parameters.
      assert.ok(await page.locator('#editor').isHidden());
      assert.match(await text('#sandbox-note'), /Not sandboxable/);
      await runQuery();
      await page.locator('#result-meta', { hasText: '20 rows' }).waitFor();
      await shot('08-saved-endpoint');

      const viaHttp = await s.fetch('/api/endpoints/query/edge.per-minute?project=default');
      assert.equal(viaHttp.status, 200);
      const rows = ((await viaHttp.json()) as { result: { minute: number; requests: number; errors: number }[] }).result;
      assert.equal(rows.length, 20);
      assert.deepEqual(rows[0], { minute: BASE_MS * 1000, requests: 2, errors: 1 });
      assert.equal(
        rows.reduce((n, r) => n + r.errors, 0),
        8,
      );
    });

    test('a save the API refuses shows its per-field messages in the dialog', async () => {
      await page.click('#save-open');
      await page.fill('#save-name', 'edge.per-minute');
      await page.click('#save-confirm');
      await page.locator('#save-error:not([hidden])').waitFor();
      assert.match(await text('#save-error .code'), /^422 /);
      assert.match(await text('#save-error .field-errors'), /name/);
      await page.fill('#save-name', 'edge.broken');
      await page.fill('#save-query', 'select nope from `cloudflare.logs.prod`');
      await page.click('#save-confirm');
      await page.locator('#save-error .message', { hasText: 'nope' }).waitFor();
      await shot('09-save-refused');
      await page.click('#save-cancel');
      const list = (await (await s.fetch('/api/endpoints')).json()) as { name: string }[];
      assert.equal(list.filter((e) => e.name.startsWith('edge.')).length, 1, 'only the good endpoint was saved');
    });

    test('typed parameters get controls for their type, and a missing required one is named by the API', async () => {
      const created = await s.fetch('/api/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'edge.typed',
          query: TYPED_SQL,
          params: [
            { name: 'since', type: 'timestamp', required: true, description: 'Rows from this instant on' },
            { name: 'errors', type: 'bool', default: false },
            { name: 'day', type: 'date', default: '2026-11-21' },
            { name: 'kind', type: 'enum', values: ['edge', 'all'], default: 'edge' },
          ],
        }),
      });
      assert.equal(created.status, 201, await created.text());
      await page.reload();
      await page.locator('#workspace:not([hidden])').waitFor();
      await page.click('#endpoint-list [data-endpoint="edge.typed"]');
      const names = await page.locator('#param-fields [data-param]').evaluateAll((xs) => xs.map((x) => `${x.tagName}:${x.getAttribute('name')}`));
      assert.deepEqual(names, ['INPUT:since', 'SELECT:errors', 'INPUT:day', 'SELECT:kind', 'INPUT:note'], 'typed first, then the undescribed @note');
      assert.equal(await page.getAttribute('#param-day', 'type'), 'date');
      assert.equal(await page.inputValue('#param-day'), '2026-11-21');
      assert.deepEqual(await page.locator('#param-kind option').allInnerTexts(), ['(not sent)', 'edge', 'all']);
      assert.equal(await page.inputValue('#param-kind'), 'edge');
      assert.equal(await page.inputValue('#param-errors'), 'false');
      assert.match(await text('#param-fields'), /Rows from this instant on/);
      await shot('10-typed-parameters');

      await runQuery();
      assert.equal(await text('#error .code'), '400 BAD_REQUEST');
      assert.match(await text('#error .message'), /Parameter "since" is required/);
      await page.fill('#param-since', '2026-11-21T10:00:00Z');
      await page.selectOption('#param-errors', 'true');
      await runQuery();
      assert.match(await text('#result-meta'), /^8 rows/);
      assert.ok(await page.locator('#error').isHidden());
      await page.fill('#param-since', 'yesterday-ish');
      await runQuery();
      assert.match(await text('#error .message'), /since/);

      // A copy saved from here keeps the parameters' types.
      await page.click('#save-open');
      await page.fill('#save-name', 'edge.typed.copy');
      await page.click('#save-confirm');
      await page.locator('#endpoint-name', { hasText: 'edge.typed.copy' }).waitFor();
      const list = (await (await s.fetch('/api/endpoints')).json()) as { name: string; params?: { name: string; type: string }[] }[];
      const copy = list.find((e) => e.name === 'edge.typed.copy');
      assert.deepEqual(
        copy?.params?.map((p) => `${p.name}:${p.type}`),
        ['since:timestamp', 'errors:bool', 'day:date', 'kind:enum'],
      );
    });

    test('values from the data are shown as text, never run as markup', async () => {
      await page.click('#endpoint-list [data-endpoint="logs.all"]');
      await page.fill('#param-project', 'markup');
      assert.equal(await page.inputValue('#editor'), PER_MINUTE_SQL, "logs.all's draft was kept");
      await page.fill('#editor', ''); // an empty editor runs the saved query
      await runQuery();
      await page.locator('#result-meta', { hasText: '1 row' }).waitFor();
      const cells = page.locator('#result-table > tbody > tr').first().locator('td');
      assert.equal(await cells.nth(2).innerText(), MARKUP);
      await cells.nth(3).locator('button.record-open').click();
      await page.locator('#record-body table.nested table.nested').waitFor(); // built when opened
      assert.match(await page.locator('#record-body').innerText(), /note\s+<img src=x/);
      assert.equal(await page.locator('#result-table img, #result-table b, #record-panel img, #record-panel b').count(), 0);
      await page.click('#record-close');
      assert.equal(await page.evaluate('window.__pwned'), undefined);
      await page.click('#endpoint-list [data-endpoint="edge.per-minute"]');
    });

    test('a reload keeps the session; signing out forgets the token', async () => {
      await page.reload();
      await page.locator('#workspace:not([hidden])').waitFor();
      assert.equal(await text('#endpoint-name'), 'edge.per-minute', 'the chosen endpoint is in the fragment');
      await page.click('#sign-out');
      await page.locator('#sign-in:not([hidden])').waitFor();
      assert.equal(await storedToken(), null);
      assert.equal(await page.evaluate('Object.keys(sessionStorage).length'), 0, 'query drafts are forgotten too');
    });

    test('a token revoked while the page is open leads back to sign-in, saying so', async () => {
      const created = await s.fetch('/api/access-tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ scopes: ['private'], description: 'browser test' }),
      });
      const { id, token } = (await created.json()) as { id: string; token: string };
      await page.fill('#token-input', token);
      await page.uncheck('#remember');
      await page.click('#sign-in-form button[type=submit]');
      await page.locator('#workspace:not([hidden])').waitFor();
      assert.equal(await storedToken(), null, 'not remembered: this tab only');
      assert.equal(await page.evaluate("sessionStorage.getItem('quarry.token')"), token);
      assert.equal((await s.fetch(`/api/access-tokens/${id}`, { method: 'DELETE' })).status, 204);
      await runQuery();
      await page.locator('#sign-in:not([hidden])').waitFor();
      assert.match(await text('#sign-in-error'), /^Signed out: The access token is unknown or has been revoked/);
      assert.equal(await page.evaluate("sessionStorage.getItem('quarry.token')"), null);
      tokensSeen.push(token);
    });

    test('the token never appeared in a URL, and the page raised no errors', () => {
      assert.ok(requests.length > 10, 'requests were seen');
      const secrets = [PRIVATE_TOKEN, PUBLIC_TOKEN, ...tokensSeen];
      const leaks = requests.filter((u) => secrets.some((t) => u.includes(t)) || u.includes('api_key'));
      assert.deepEqual(leaks, []);
      assert.deepEqual(problems, []);
    });
  });
}
