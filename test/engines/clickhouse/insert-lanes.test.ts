/**
 * The per-table insert lanes (src/engines/clickhouse/insert-lanes.ts): one insert per table at a
 * time, rows arriving meanwhile batched into the next, tables in parallel, and a failed batch
 * retried caller by caller so one bad caller fails alone. The insert here is a function that
 * records its calls and finishes when the test says so, so every interleaving is decided by the
 * test, not by timing.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { connectClickHouse } from '../../../src/engines/clickhouse/client.ts';
import { openClickHouseEngine } from '../../../src/engines/clickhouse/index.ts';
import { type EncodedRows, InsertLanes } from '../../../src/engines/clickhouse/insert-lanes.ts';
import type { TableBatch } from '../../../src/storage/port.ts';
import { QuarryError } from '../../../src/errors.ts';
import { IngestService } from '../../../src/ingest/pipeline.ts';
import { edgeEvent } from '../../ingest/fixtures.ts';
import { engines } from '../../support/engines.ts';

interface Call {
  table: string;
  text: string;
  format: EncodedRows['format'];
  events: number;
  finish(error?: unknown): void;
}

function recorder(): { calls: Call[]; insert: (table: string, rows: EncodedRows) => Promise<void> } {
  const calls: Call[] = [];
  return {
    calls,
    insert: (table, rows) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ table, text: rows.data.toString(), format: rows.format, events: rows.events, finish: (e) => (e === undefined ? resolve() : reject(e)) });
      }),
  };
}

/** Text rows (one event per line). */
function T(text: string, format: EncodedRows['format'] = 'JSONEachRow'): EncodedRows {
  return { format, data: Buffer.from(text), events: text.split('\n').length - 1 };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('insert lanes', () => {
  it('runs one insert per table at a time, batches what arrives meanwhile, and runs tables in parallel', async () => {
    const r = recorder();
    const lanes = new InsertLanes(r.insert);
    const settled: string[] = [];
    const track = (name: string, p: Promise<void>) => p.then(() => settled.push(name));
    const a1 = track('a1', lanes.add('a', T('r1\n')));
    const b1 = track('b1', lanes.add('b', T('x1\n')));
    const a2 = track('a2', lanes.add('a', T('r2\n')));
    const a3 = track('a3', lanes.add('a', T('r3\nr4\n')));
    await tick();
    assert.deepEqual(
      r.calls.map((c) => [c.table, c.text]),
      [
        ['a', 'r1\n'],
        ['b', 'x1\n'],
      ],
    );
    r.calls[1]?.finish();
    await b1;
    assert.deepEqual(settled, ['b1']);
    r.calls[0]?.finish();
    await a1;
    await tick();
    // a2 and a3 waited together while a1 ran: one insert for both.
    assert.deepEqual(
      r.calls.slice(2).map((c) => [c.table, c.text, c.events]),
      [['a', 'r2\nr3\nr4\n', 3]],
    );
    assert.deepEqual(settled, ['b1', 'a1']);
    r.calls[2]?.finish();
    await Promise.all([a2, a3]);
    assert.deepEqual(settled, ['b1', 'a1', 'a2', 'a3']);
  });

  it('never puts rows of two formats in one insert', async () => {
    const r = recorder();
    const lanes = new InsertLanes(r.insert);
    const first = lanes.add('t', T('a\n'));
    await tick();
    const rest = [
      lanes.add('t', T('b\n', 'RowBinary')),
      lanes.add('t', T('c\n', 'RowBinary')),
      lanes.add('t', T('d\n')),
      lanes.add('t', T('e\n', 'RowBinary')),
    ];
    for (let i = 0; i < 4; i++) {
      r.calls[i]?.finish();
      await tick();
      await tick();
    }
    await first;
    await Promise.all(rest);
    assert.deepEqual(
      r.calls.map((c) => [c.format, c.text, c.events]),
      [
        ['JSONEachRow', 'a\n', 1],
        ['RowBinary', 'b\nc\n', 2],
        ['JSONEachRow', 'd\n', 1],
        ['RowBinary', 'e\n', 1],
      ],
    );
  });

  it('retries a failed batch caller by caller, so only the bad one fails', async () => {
    const r = recorder();
    const lanes = new InsertLanes(r.insert);
    const first = lanes.add('t', T('ok0\n'));
    await tick();
    const good = lanes.add('t', T('ok1\n'));
    const bad = assert.rejects(lanes.add('t', T('bad\n')), /bad row/);
    const later = lanes.add('t', T('ok2\n'));
    r.calls[0]?.finish();
    await first;
    await tick();
    assert.equal(r.calls[1]?.text, 'ok1\nbad\nok2\n');
    r.calls[1]?.finish(new Error('refused'));
    await tick();
    for (let i = 2; i < 5; i++) {
      const call = r.calls[i];
      assert.ok(call);
      call.finish(call.text === 'bad\n' ? new Error('refused: bad row') : undefined);
      await tick();
    }
    assert.deepEqual(
      r.calls.slice(2).map((c) => c.text),
      ['ok1\n', 'bad\n', 'ok2\n'],
    );
    await good;
    await later;
    await bad;
  });

  it('does not retry when every retry would fail too, or when the failed insert may have been stored', async () => {
    for (const error of [Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }), new QuarryError('UNAVAILABLE', 'lost')]) {
      const r = recorder();
      const lanes = new InsertLanes(r.insert);
      const first = lanes.add('t', T('a\n'));
      await tick();
      const both = [lanes.add('t', T('b\n')), lanes.add('t', T('c\n'))].map((p) => assert.rejects(p, (e) => e === error));
      r.calls[0]?.finish();
      await first;
      await tick();
      r.calls[1]?.finish(error);
      await Promise.all(both);
      assert.equal(r.calls.length, 2, 'no insert after the failure');
    }
  });
});

describe('the ingest pipeline on ClickHouse (chDB)', { skip: !engines.includes('clickhouse') }, () => {
  it('hands each request to storage on its own while others are being stored, and stores every row once', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quarry-lanes-'));
    const engine = await openClickHouseEngine({ chdbPath: dir, database: 'quarry' });
    try {
      const storage = engine.storage;
      const append = storage.append.bind(storage);
      const sizes: number[] = [];
      let running = 0;
      let most = 0;
      storage.append = async (batches: readonly TableBatch[]) => {
        sizes.push(batches.reduce((n, b) => n + b.events.length, 0));
        running++;
        most = Math.max(most, running);
        try {
          await append(batches);
        } finally {
          running--;
        }
      };
      const ingest = new IngestService({ sources: engine.sources, storage });
      const sources = [0, 1, 2].map((k) => ({ id: `00000000-0000-4000-8000-00000000000${k}`, name: `lanes.${k}` }));
      // The tables first, so the requests below need no schema change and are not held back.
      await Promise.all(sources.map((s, k) => ingest.ingest(s, [{ ...edgeEvent(k), id: `warm-${k}` }])));
      sizes.length = 0;
      most = 0;
      let id = 0;
      await Promise.all(
        Array.from({ length: 12 }, (_, r) =>
          ingest.ingest(
            sources[r % 3] as { id: string; name: string },
            Array.from({ length: 7 }, () => ({ ...edgeEvent(id), id: `e${id++}` })),
          ),
        ),
      );
      assert.deepEqual(sizes, Array(12).fill(7), 'one request per append');
      assert.ok(most >= 2, `appends overlapped (at most ${most} at once)`);
      await ingest.close();
      const conn = await connectClickHouse({ chdbPath: dir, database: 'quarry' });
      try {
        for (const s of sources) {
          const table = engine.sources.catalog.sourceByName(s.name)?.table;
          const result = await conn.client.query({ query: `SELECT count() AS n, uniqExact(id) AS d FROM quarry.${table}`, format: 'JSONEachRow' });
          assert.deepEqual(await result.json(), [{ n: 29, d: 29 }], s.name);
        }
      } finally {
        await conn.close();
      }
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
