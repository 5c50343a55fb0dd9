/**
 * The importer's pure parts: option parsing (--since forms, defaults from the environment), the
 * id separator and the lookup query, the table name rule, and the planning of sources.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ImportError, redactUrl } from '../../src/import/errors.ts';
import { planSources } from '../../src/import/importer.ts';
import { eventsTableName, type LogflareSource } from '../../src/import/logflare-reader.ts';
import { parseImportArgs, parseSince } from '../../src/import/options.ts';
import { lookupQuery, separatorFor } from '../../src/import/quarry-client.ts';

const NOW = new Date('2026-11-27T12:00:00Z');

const rejects = (f: () => unknown, code: string, re: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof ImportError && e.code === code && re.test(e.message));

describe('import-logflare: options', () => {
  test('--since: ages, dates, date-times (UTC without an offset)', () => {
    assert.equal(parseSince('7d', NOW).toISOString(), '2026-11-20T12:00:00.000Z');
    assert.equal(parseSince('12h', NOW).toISOString(), '2026-11-27T00:00:00.000Z');
    assert.equal(parseSince('30m', NOW).toISOString(), '2026-11-27T11:30:00.000Z');
    assert.equal(parseSince('2w', NOW).toISOString(), '2026-11-13T12:00:00.000Z');
    assert.equal(parseSince('2026-11-01', NOW).toISOString(), '2026-11-01T00:00:00.000Z');
    assert.equal(parseSince('2026-11-01T10:30:00', NOW).toISOString(), '2026-11-01T10:30:00.000Z');
    assert.equal(parseSince('2026-11-01T10:30:00+02:00', NOW).toISOString(), '2026-11-01T08:30:00.000Z');
    assert.equal(parseSince('2026-11-01 10:30:00.250Z', NOW).toISOString(), '2026-11-01T10:30:00.250Z');
    rejects(() => parseSince('yesterday', NOW), 'BAD_ARGUMENTS', /--since must be/);
    rejects(() => parseSince('2026-13-01', NOW), 'BAD_ARGUMENTS', /--since must be/);
  });

  test('defaults come from the environment the service and Logflare use', () => {
    const o = parseImportArgs([], { POSTGRES_BACKEND_URL: 'postgres://a@db/_supabase', PORT: '4010' }, NOW);
    assert.equal(o.from, 'postgres://a@db/_supabase');
    assert.equal(o.schema, '_analytics');
    assert.equal(o.to, 'http://127.0.0.1:4010');
    assert.equal(o.batchSize, 2000);
    assert.equal(o.dryRun, false);
    const p = parseImportArgs(
      ['--from', 'postgres://x@h/db', '--to', 'http://q:4000/analytics/v1/', '--sources', 'a, b', '--since', '1d', '--dry-run', '--schema', 's'],
      { QUARRY_URL: 'http://ignored' },
      NOW,
    );
    assert.equal(p.to, 'http://q:4000/analytics/v1');
    assert.deepEqual(p.sources, ['a', 'b']);
    assert.equal(p.since?.toISOString(), '2026-11-26T12:00:00.000Z');
    assert.equal(p.dryRun, true);
    assert.equal(p.schema, 's');
  });

  test('bad arguments are named', () => {
    rejects(() => parseImportArgs([], {}, NOW), 'BAD_ARGUMENTS', /--from is required/);
    rejects(() => parseImportArgs(['--from', 'x', '--batch-size', '0'], {}, NOW), 'BAD_ARGUMENTS', /--batch-size must be a whole number from 1 to 5000/);
    rejects(() => parseImportArgs(['--from', 'x', '--to', 'ftp://x'], {}, NOW), 'BAD_ARGUMENTS', /--to must be Quarry's http/);
    rejects(() => parseImportArgs(['--from', 'x', '--frm', 'y'], {}, NOW), 'BAD_ARGUMENTS', /Unknown option '--frm'/);
  });

  test('a password never shows', () => {
    assert.equal(redactUrl('postgres://supabase_admin:s3cret@db:5432/_supabase'), 'postgres://supabase_admin:****@db:5432/_supabase');
  });
});

describe('import-logflare: Logflare layout and lookups', () => {
  test("the events table is Logflare's PgRepo.table_name/1", () => {
    assert.equal(eventsTableName('8e6a9c4f-1b2d-4c3e-9f00-0123456789ab'), 'log_events_8e6a9c4f_1b2d_4c3e_9f00_0123456789ab');
  });

  test('the separator is in no id', () => {
    assert.equal(separatorFor(['a', 'b,c']), '\n');
    assert.equal(separatorFor(['a\nb', 'c']), '\u001f');
    assert.equal(separatorFor(['a\nb', 'c\u001f']), '\u001f\u001f');
  });

  test('the lookup query binds every value and names only a valid source', () => {
    const q = lookupQuery('cloudflare.logs.prod');
    assert.match(q, /from `cloudflare\.logs\.prod`/);
    assert.match(q, /@from.*@to/s);
    assert.match(q, /id in \(select x from unnest\(split\(coalesce\(@ids, ''\), coalesce\(@sep, ','\)\)\) as x\)/);
    assert.throws(() => lookupQuery('x` where 1=1 --'), /not a Quarry source name/);
  });

  test('planning: unknown names, missing Quarry sources, --create-sources, --dry-run', async () => {
    const lf = (name: string): LogflareSource => ({ name, token: 't', table: 'log_events_t', hasTable: true });
    const logflare = [lf('a'), lf('b'), lf('c')];
    const quarry = [{ id: '1', name: 'a' }];
    const created: string[] = [];
    const client = {
      createSource: async (name: string) => {
        created.push(name);
        return { id: `new-${name}`, name };
      },
    };
    const base = { sources: undefined, createSources: false, dryRun: false };
    await assert.rejects(planSources(logflare, { ...base, sources: ['a', 'zz'] }, quarry, client), /Logflare has no source named "zz"/);
    await assert.rejects(planSources(logflare, base, quarry, client), /Quarry has no source named "b", "c"\. Create them first/);
    const dry = await planSources(logflare, { ...base, dryRun: true }, quarry, client);
    assert.deepEqual(
      dry.map((p) => [p.logflare.name, p.quarry?.id, p.note]),
      [
        ['a', '1', undefined],
        ['b', undefined, 'missing in Quarry (would be created with --create-sources)'],
        ['c', undefined, 'missing in Quarry (would be created with --create-sources)'],
      ],
    );
    assert.deepEqual(created, []);
    const made = await planSources(logflare, { ...base, createSources: true, sources: ['b'] }, quarry, client);
    assert.deepEqual(created, ['b']);
    assert.deepEqual(
      made.map((p) => [p.logflare.name, p.quarry?.id, p.note]),
      [['b', 'new-b', 'created in Quarry']],
    );
    await assert.rejects(planSources([lf('has space')], base, quarry, client), /cannot be Quarry source names/);
  });
});
