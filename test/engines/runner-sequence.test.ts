/**
 * The run sequence both engines share (src/query/run.ts), over a scripted driver: the deadline and
 * its one wording, the row and byte caps, result memory given back on every failure, the column
 * list and warnings, the retry, and the driver's steps in order with everything it took given back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isQuarryError, QuarryError } from '../../src/errors.ts';
import type { DriverRun, QueryDriver, ResultRow, RowStream, StatementLimits } from '../../src/query/driver.ts';
import type { RunOptions } from '../../src/query/port.ts';
import { ResultMemory } from '../../src/query/result-memory.ts';
import { queryTimeout, runQuery, SIZE_CHECK_ROWS } from '../../src/query/run.ts';
import type { Translation } from '../../src/query/translation-cache.ts';
import type { PreparedQuery } from '../../src/sql/index.ts';

const query = {} as PreparedQuery;

function translation(sql: string, columns = ['a', 'b'], warnings: string[] = []): Translation {
  return {
    catalog: { sourceByName: () => undefined },
    deps: [],
    generated: { sql, params: [], columns: columns.map((name) => ({ name, type: { k: 'unknown' } })), warnings },
    tables: [],
    ctes: [],
  } as unknown as Translation;
}

interface Script {
  /** Rows each statement produces, by SQL text. */
  rows?: Record<string, number>;
  /** Rows each `read` gives at most (a chunk). */
  chunk?: number;
  /** Each read waits this long. */
  readMs?: number;
  /** The statement fails after this many rows, by SQL text. */
  failAfter?: Record<string, { rows: number; error: unknown }>;
  /** `open` waits this long. */
  openMs?: number;
  /** Rows of this many characters. */
  width?: number;
  retry?: Translation;
  first?: Translation;
}

function scripted(script: Script) {
  const log: string[] = [];
  const reads: number[] = [];
  const limits: StatementLimits[] = [];
  const first = script.first ?? translation('q1');
  const driver: QueryDriver = {
    translate: () => first,
    ...(script.retry
      ? {
          retry: (error: unknown, failed: Translation) => {
            log.push(`retry ${failed.generated.sql} after ${(error as Error).message}`);
            return script.retry;
          },
        }
      : {}),
    begin(): DriverRun {
      log.push('begin');
      return {
        verify(t) {
          log.push(`verify ${t.generated.sql}`);
        },
        async open(t, l) {
          log.push(`open ${t.generated.sql}`);
          limits.push(l);
          if (script.openMs) await new Promise((r) => setTimeout(r, script.openMs));
          const sql = t.generated.sql;
          const total = script.rows?.[sql] ?? 0;
          const fail = script.failAfter?.[sql];
          let at = 0;
          let finished = false;
          const stream: RowStream = {
            read(rows: ResultRow[], max: number) {
              const step = () => {
                reads.push(max);
                if (fail && at >= fail.rows) throw fail.error;
                const n = Math.min(max, script.chunk ?? max, total - at);
                for (let i = 0; i < n; i++, at++) rows.push({ a: at, b: 'x'.repeat(script.width ?? 1) });
                if (at >= total) finished = true;
                return !finished;
              };
              return script.readMs ? new Promise<void>((r) => setTimeout(r, script.readMs)).then(step) : step();
            },
            close() {
              log.push(`close ${sql}${finished ? '' : ' early'}`);
            },
          };
          return stream;
        },
        interrupt() {
          log.push('interrupt');
        },
        end() {
          log.push('end');
        },
      };
    },
    mapError(e) {
      return new QuarryError('INVALID_QUERY', `mapped: ${(e as Error).message}`);
    },
  };
  return { driver, log, reads, limits };
}

const options = (o: Partial<RunOptions> = {}): RunOptions => ({ timeoutMs: 5000, maxRows: 1000, ...o });

function code(expected: string, message?: RegExp) {
  return (e: unknown) => {
    assert.ok(isQuarryError(e), String(e));
    assert.equal(e.code, expected);
    if (message) assert.match(e.message, message);
    return true;
  };
}

describe('the run sequence', () => {
  test('rows, the generated column list and warnings; the driver steps in order, everything given back', async () => {
    const { driver, log } = scripted({ rows: { q1: 3 }, first: translation('q1', ['a', 'b'], ['m.x']) });
    const r = await runQuery(driver, query, {}, options());
    assert.deepEqual(
      r.rows.map((row) => row.a),
      [0, 1, 2],
    );
    assert.deepEqual(r.columns, ['a', 'b']);
    assert.deepEqual(r.warnings, ['m.x']);
    assert.deepEqual(log, ['begin', 'verify q1', 'open q1', 'close q1', 'end']);
  });

  test('an empty result still has its columns', async () => {
    const { driver } = scripted({ rows: { q1: 0 }, first: translation('q1', ['x', 'y', 'x']) });
    const r = await runQuery(driver, query, {}, options());
    assert.deepEqual(r.rows, []);
    assert.deepEqual(r.columns, ['x', 'y', 'x']);
  });

  test('at most maxRows rows, whatever the statement produces; the statement is stopped there', async () => {
    const { driver, log, limits } = scripted({ rows: { q1: 100 }, chunk: 7 });
    const r = await runQuery(driver, query, {}, options({ maxRows: 10 }));
    assert.equal(r.rows.length, 10);
    assert.equal(limits[0]?.maxRows, 10);
    assert.ok(log.includes('close q1 early'));
  });

  test('with a byte cap or a claim, rows are measured every SIZE_CHECK_ROWS rows', async () => {
    const { driver, reads } = scripted({ rows: { q1: 100 } });
    const pool = new ResultMemory(2 ** 30);
    const claim = pool.claim();
    await runQuery(driver, query, {}, options({ memory: claim }));
    assert.ok(
      reads.every((n) => n <= SIZE_CHECK_ROWS),
      String(reads),
    );
    assert.ok(claim.bytes > 100 * 10, `held ${claim.bytes}`);
    claim.release();
    const unmeasured = scripted({ rows: { q1: 100 } });
    await runQuery(unmeasured.driver, query, {}, options());
    assert.deepEqual(unmeasured.reads.slice(0, 1), [1000], 'nothing to count: as many rows as the cap at once');
  });

  test('past the byte cap: RESULT_TOO_LARGE, a few rows after it, the statement stopped, nothing held', async () => {
    const { driver, log, reads } = scripted({ rows: { q1: 10_000 }, width: 100 });
    const pool = new ResultMemory(2 ** 30);
    const claim = pool.claim();
    await assert.rejects(
      runQuery(driver, query, {}, options({ maxRows: 10_000, maxBytes: 4096, memory: claim })),
      code('RESULT_TOO_LARGE', /QUERY_MAX_RESPONSE_BYTES/),
    );
    assert.ok(reads.length * SIZE_CHECK_ROWS < 100, `${reads.length} reads`);
    assert.equal(pool.used, 0);
    assert.deepEqual(log.slice(-2), ['close q1 early', 'end']);
  });

  test('the pool refusing: OVERLOADED, nothing held', async () => {
    const { driver } = scripted({ rows: { q1: 10_000 }, width: 1000 });
    const pool = new ResultMemory(64 * 1024);
    const other = pool.claim();
    other.hold(60 * 1024);
    const claim = pool.claim();
    await assert.rejects(runQuery(driver, query, {}, options({ maxRows: 10_000, memory: claim })), code('OVERLOADED'));
    assert.equal(claim.bytes, 0);
    other.release();
  });

  test('the deadline interrupts the run once, and the failure that follows is QUERY_TIMEOUT, worded the same', async () => {
    const { driver, log } = scripted({
      rows: { q1: 1000 },
      chunk: 1,
      readMs: 5,
      failAfter: { q1: { rows: 20, error: new Error('Interrupt Error: stopped') } },
    });
    const claim = new ResultMemory(2 ** 30).claim();
    claim.hold(100);
    await assert.rejects(runQuery(driver, query, {}, options({ timeoutMs: 40, memory: claim })), (e: unknown) => {
      assert.deepEqual(e, queryTimeout(40));
      assert.equal((e as QuarryError).status, 504);
      assert.equal((e as Error).message, 'The query ran longer than 40 ms and was stopped');
      return true;
    });
    assert.equal(claim.bytes, 0);
    assert.equal(log.filter((l) => l === 'interrupt').length, 1);
    assert.deepEqual(log.slice(-2), ['close q1 early', 'end']);
  });

  test('a statement that ends normally past the deadline (stopped at its own limit) is a time-out, not an answer', async () => {
    const { driver } = scripted({ rows: { q1: 5 }, chunk: 1, readMs: 30 });
    await assert.rejects(runQuery(driver, query, {}, options({ timeoutMs: 50 })), code('QUERY_TIMEOUT', /ran longer than 50 ms/));
  });

  test('the deadline passing before the statement starts: no statement, QUERY_TIMEOUT; the engine gets the time left', async () => {
    const late = scripted({ rows: { q1: 5 } });
    const slowVerify: QueryDriver = {
      ...late.driver,
      async begin(q, p) {
        const run = await late.driver.begin(q, p);
        return { ...run, verify: () => new Promise((r) => setTimeout(r, 60)) };
      },
    };
    await assert.rejects(runQuery(slowVerify, query, {}, options({ timeoutMs: 30 })), code('QUERY_TIMEOUT'));
    assert.ok(!late.log.some((l) => l.startsWith('open')), late.log.join());
    const timed = scripted({ rows: { q1: 1 } });
    await runQuery(timed.driver, query, {}, options({ timeoutMs: 4000 }));
    const remaining = timed.limits[0]?.remainingMs ?? 0;
    assert.ok(remaining > 3000 && remaining <= 4000, String(remaining));
  });

  test("an engine's own time-out reads the same as the deadline's", async () => {
    const { driver } = scripted({ rows: { q1: 5 }, failAfter: { q1: { rows: 0, error: new Error('engine time-out') } } });
    const timeoutDriver: QueryDriver = { ...driver, mapError: () => new QuarryError('QUERY_TIMEOUT', 'the engine says so') };
    await assert.rejects(runQuery(timeoutDriver, query, {}, options({ timeoutMs: 1234 })), (e: unknown) => {
      assert.deepEqual(e, queryTimeout(1234));
      return true;
    });
  });

  test("the driver maps its engine's errors; QuarryErrors pass unchanged", async () => {
    const engine = scripted({ rows: { q1: 5 }, chunk: 1, failAfter: { q1: { rows: 2, error: new Error('Binder Error: x') } } });
    await assert.rejects(runQuery(engine.driver, query, {}, options()), code('INVALID_QUERY', /^mapped: Binder Error: x$/));
    assert.deepEqual(engine.log.slice(-2), ['close q1 early', 'end']);
    const own = scripted({ rows: { q1: 5 }, failAfter: { q1: { rows: 0, error: new QuarryError('BAD_REQUEST', 'a parameter') } } });
    await assert.rejects(runQuery(own.driver, query, {}, options()), code('BAD_REQUEST', /^a parameter$/));
  });

  test("a retry runs the driver's other translation from nothing, once", async () => {
    const claim = new ResultMemory(2 ** 30).claim();
    const ok = scripted({
      rows: { q1: 50, q2: 3 },
      failAfter: { q1: { rows: 40, error: new Error('Conversion Error: value') } },
      retry: translation('q2', ['c']),
    });
    const r = await runQuery(ok.driver, query, {}, options({ memory: claim }));
    assert.deepEqual(
      r.rows.map((row) => row.a),
      [0, 1, 2],
    );
    assert.deepEqual(r.columns, ['c'], "the retried translation's columns");
    assert.ok(claim.bytes > 0 && claim.bytes < 200, `only the second attempt's rows are held: ${claim.bytes}`);
    claim.release();
    assert.deepEqual(ok.log, [
      'begin',
      'verify q1',
      'open q1',
      'close q1 early',
      'retry q1 after Conversion Error: value',
      'verify q2',
      'open q2',
      'close q2',
      'end',
    ]);
    const twice = scripted({
      rows: { q1: 5, q2: 5 },
      failAfter: { q1: { rows: 0, error: new Error('first') }, q2: { rows: 0, error: new Error('second') } },
      retry: translation('q2'),
    });
    await assert.rejects(runQuery(twice.driver, query, {}, options()), code('INVALID_QUERY', /second/));
    assert.equal(twice.log.filter((l) => l.startsWith('retry')).length, 1);
  });

  test('no retry once the deadline has passed', async () => {
    const { driver, log } = scripted({
      rows: { q1: 1000, q2: 1 },
      chunk: 1,
      readMs: 5,
      failAfter: { q1: { rows: 10, error: new Error('Conversion Error: value') } },
      retry: translation('q2'),
      openMs: 40,
    });
    await assert.rejects(runQuery(driver, query, {}, options({ timeoutMs: 30 })), code('QUERY_TIMEOUT'));
    assert.ok(!log.some((l) => l.startsWith('retry')), log.join());
  });
});
