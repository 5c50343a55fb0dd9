import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DemoEvent, Json, SourceName } from '../../src/demo/generator.ts';
import { generateBatches, generateEvents, SOURCE_NAMES } from '../../src/demo/generator.ts';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');

function collect(count: number, extra: Partial<Parameters<typeof generateEvents>[0]> = {}) {
  return [...generateEvents({ count, seed: 42, now: NOW, days: 3, ...extra })];
}

function path(event: DemoEvent, ...keys: string[]): Json | undefined {
  let value: Json | undefined = event;
  for (const key of keys) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = value[key];
  }
  return value;
}

describe('demo generator', () => {
  it('gives the same events for the same seed, and different ones for another seed', () => {
    const a = collect(2_000, { withIds: true });
    const b = collect(2_000, { withIds: true });
    assert.deepEqual(a, b);
    const c = [...generateEvents({ count: 2_000, seed: 43, now: NOW, days: 3 })];
    assert.notDeepEqual(
      a.map((e) => e.event.event_message),
      c.map((e) => e.event.event_message),
    );
  });

  it('does not change event content when ids are requested', () => {
    const plain = collect(500);
    const withIds = collect(500, { withIds: true });
    for (let i = 0; i < plain.length; i++) {
      const { id, ...rest } = withIds[i]!.event;
      // Version 7, carrying the event's own time, as Quarry would assign it on arrival.
      assert.match(String(id), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = Number.parseInt(String(id).slice(0, 8) + String(id).slice(9, 13), 16);
      assert.equal(ms, Math.floor(Date.parse(String(rest.timestamp))));
      assert.deepEqual(rest, plain[i]!.event);
    }
    assert.equal(new Set(withIds.map((e) => e.event.id)).size, withIds.length);
  });

  it('produces all nine sources, edge logs the majority', () => {
    const counts = new Map<SourceName, number>();
    for (const { source } of collect(20_000)) counts.set(source, (counts.get(source) ?? 0) + 1);
    for (const name of SOURCE_NAMES) assert.ok((counts.get(name) ?? 0) > 0, `no events for ${name}`);
    assert.ok((counts.get('cloudflare.logs.prod') ?? 0) > 20_000 * 0.45);
  });

  it('puts the project where each logs.all CTE filters on it', () => {
    const events = collect(20_000, { projects: ['default', 'abcdefghijklmnopqrst'] });
    const topLevel = new Set<SourceName>(['cloudflare.logs.prod', 'postgres.logs', 'gotrue.logs.prod', 'postgREST.logs.prod', 'pgbouncer.logs.prod']);
    const projects = new Set<string>();
    for (const { source, event } of events) {
      if (topLevel.has(source)) {
        assert.equal(typeof event.project, 'string', `${source} needs a top-level project`);
        projects.add(String(event.project));
      } else if (source === 'realtime.logs.prod' || source === 'storage.logs.prod.2') {
        assert.equal(typeof path(event, 'metadata', 'project'), 'string', `${source} needs metadata.project`);
        assert.equal(event.project, undefined);
      } else {
        assert.equal(typeof path(event, 'metadata', 'project_ref'), 'string', `${source} needs metadata.project_ref`);
        assert.equal(event.project, undefined);
      }
      assert.equal(typeof event.event_message, 'string');
      assert.match(String(event.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3,6}Z$/);
    }
    assert.deepEqual([...projects].sort(), ['abcdefghijklmnopqrst', 'default']);
  });

  it('gives edge events the request and response fields Studio reads', () => {
    const edge = collect(5_000, { sources: ['cloudflare.logs.prod'] }).map((e) => e.event);
    const statuses = edge.map((e) => Number(path(e, 'metadata', 'response', 'status_code')));
    assert.ok(
      statuses.some((s) => s >= 500),
      'some 5xx',
    );
    assert.ok(
      statuses.some((s) => s >= 400 && s < 500),
      'some 4xx',
    );
    assert.ok(statuses.filter((s) => s < 400).length > edge.length * 0.8, 'mostly successes');
    const prefixes = new Set(
      edge.map((e) =>
        String(path(e, 'metadata', 'request', 'path'))
          .split('/')
          .slice(0, 3)
          .join('/'),
      ),
    );
    for (const p of ['/rest/v1', '/auth/v1', '/storage/v1', '/realtime/v1', '/functions/v1']) {
      assert.ok(prefixes.has(p), `paths under ${p}`);
    }
    const ips = edge.map((e) => String(path(e, 'metadata', 'request', 'headers', 'cf_connecting_ip')));
    assert.ok(
      ips.some((ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip)),
      'IPv4 clients',
    );
    assert.ok(
      ips.some((ip) => ip.includes(':')),
      'IPv6 clients',
    );
    const first = edge[0]!;
    for (const key of ['method', 'path', 'search', 'url', 'host', 'protocol']) {
      assert.equal(typeof path(first, 'metadata', 'request', key), 'string', `request.${key}`);
    }
    assert.equal(typeof path(first, 'metadata', 'request', 'headers', 'user_agent'), 'string');
    assert.equal(typeof path(first, 'metadata', 'request', 'headers', 'x_real_ip'), 'string');
    assert.equal(typeof path(first, 'metadata', 'response', 'origin_time'), 'number');
    assert.equal(typeof path(first, 'metadata', 'request', 'sb', 'jwt', 'apikey', 'payload', 'role'), 'string');
    assert.match(String(path(first, 'metadata', 'request', 'url')), /default/, 'usage.api-counts matches the project in the url');
  });

  it('gives the other sources their characteristic fields', () => {
    const events = collect(20_000);
    const bySource = (s: SourceName) => events.filter((e) => e.source === s).map((e) => e.event);
    const severities = new Set(bySource('postgres.logs').map((e) => String(path(e, 'metadata', 'parsed', 'error_severity'))));
    for (const s of ['LOG', 'WARNING', 'ERROR']) assert.ok(severities.has(s), `severity ${s}`);
    const auth = bySource('gotrue.logs.prod')[0]!;
    const line = JSON.parse(String(auth.event_message)) as Record<string, unknown>;
    assert.equal(line.level, path(auth, 'metadata', 'level'));
    const context = path(bySource('storage.logs.prod.2')[0]!, 'metadata', 'context');
    assert.ok(Array.isArray(context) && context.length === 1 && typeof context[0] === 'object');
    for (const e of bySource('deno-subhosting-events')) assert.equal(typeof path(e, 'metadata', 'event_type'), 'string');
  });

  it('spreads events over the days asked for, with a dense last hour, in time order', () => {
    const events = collect(20_000, { burstFraction: 0.2 });
    const times = events.map((e) => Date.parse(String(e.event.timestamp)));
    assert.ok(Math.min(...times) >= NOW - 3 * 86_400_000);
    assert.ok(Math.max(...times) <= NOW);
    assert.ok(Math.min(...times) < NOW - 2.5 * 86_400_000, 'reaches back close to 3 days');
    const lastHour = times.filter((t) => t > NOW - 3_600_000).length;
    assert.ok(lastHour > 20_000 * 0.18 && lastHour < 20_000 * 0.22, `last hour holds ${lastHour}`);
    const previousHour = times.filter((t) => t > NOW - 7_200_000 && t <= NOW - 3_600_000).length;
    assert.ok(lastHour > previousHour * 10, 'the last hour is far denser than the one before');
    for (let i = 1; i < times.length; i++) assert.ok(times[i]! >= times[i - 1]! - 1, 'chronological');
  });

  it('batches per source without losing or reordering events', () => {
    const flat = collect(3_000);
    const batches = [...generateBatches({ count: 3_000, seed: 42, now: NOW, days: 3 }, 100)];
    assert.equal(
      batches.reduce((n, b) => n + b.events.length, 0),
      3_000,
    );
    for (const b of batches) assert.ok(b.events.length <= 100 && b.events.length > 0);
    const edgeFlat = flat.filter((e) => e.source === 'cloudflare.logs.prod').map((e) => e.event);
    const edgeBatched = batches.filter((b) => b.source === 'cloudflare.logs.prod').flatMap((b) => b.events);
    assert.deepEqual(edgeBatched, edgeFlat);
  });

  it('generates the count asked for (its speed is a figure of npm run bench:micro, not a test)', () => {
    const n = 100_000;
    let k = 0;
    for (const _ of generateEvents({ count: n, seed: 1, projects: ['default', 'b', 'c'], days: 8 })) k++;
    assert.equal(k, n);
  });
});
