/**
 * Loads the benchmark's events into PostgreSQL in Logflare's layout (one table per source:
 * `id`, `body jsonb` holding the whole event with `timestamp` as integer microseconds,
 * `event_message`, `timestamp`; BRIN index on `timestamp`), through COPY.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import pg from 'pg';
import type { GenerateOptions, SourceName } from '../../src/demo/generator.ts';
import { generateEvents, SOURCE_NAMES } from '../../src/demo/generator.ts';
import type { PgServer } from './server.ts';
import { psqlPath } from './server.ts';

export function baselineTable(source: string): string {
  return `log_events_${source.replace(/[^A-Za-z0-9]/g, '_').toLowerCase()}`;
}

/** COPY text format: escape backslash, tab, newline, carriage return. */
function copyText(s: string): string {
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

function micros(iso: string): number {
  const ms = Date.parse(`${iso.slice(0, 23)}Z`);
  const extra = /^\d{3}/.test(iso.slice(23, 26)) ? Number(iso.slice(23, 26)) : 0;
  return ms * 1000 + extra;
}

export async function pgClient(server: PgServer): Promise<pg.Client> {
  const client = new pg.Client({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  await client.query("SET TIME ZONE 'UTC'");
  return client;
}

export interface LoadResult {
  events: number;
  loadMs: number;
  indexMs: number;
  bytes: number;
}

export async function loadBaseline(server: PgServer, generate: GenerateOptions, log: (line: string) => void): Promise<LoadResult> {
  const client = await pgClient(server);
  try {
    for (const source of SOURCE_NAMES) {
      const t = baselineTable(source);
      await client.query(`DROP TABLE IF EXISTS ${t}`);
      await client.query(`CREATE TABLE ${t} (id TEXT NOT NULL, body JSONB, event_message TEXT, "timestamp" TIMESTAMP)`);
    }
    const started = performance.now();
    const copies = new Map<SourceName, ChildProcessWithoutNullStreams>();
    const done: Promise<void>[] = [];
    for (const source of SOURCE_NAMES) {
      const child = spawn(psqlPath(), [
        '-h',
        server.host,
        '-p',
        String(server.port),
        '-U',
        'postgres',
        '-d',
        'postgres',
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        `COPY ${baselineTable(source)} (id, body, event_message, "timestamp") FROM STDIN`,
      ]);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      done.push(
        new Promise((resolve, reject) => {
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`COPY into ${source} failed: ${stderr.slice(-500)}`))));
        }),
      );
      copies.set(source, child);
    }
    let events = 0;
    const pending = new Map<SourceName, string[]>();
    const flush = async (source: SourceName, lines: string[]) => {
      const child = copies.get(source)!;
      if (!child.stdin.write(lines.join(''))) await new Promise<void>((r) => child.stdin.once('drain', () => r()));
    };
    for (const { source, event } of generateEvents(generate)) {
      const iso = String(event.timestamp);
      const us = micros(iso);
      const body = { ...event, timestamp: us };
      const row = `${copyText(String(event.id))}\t${copyText(JSON.stringify(body))}\t${copyText(String(event.event_message))}\t${new Date(Math.floor(us / 1000)).toISOString().slice(0, 23)}${iso.slice(23, 26)}\n`;
      let list = pending.get(source);
      if (list === undefined) {
        list = [];
        pending.set(source, list);
      }
      list.push(row);
      if (list.length >= 2_000) {
        pending.set(source, []);
        await flush(source, list);
      }
      events++;
      if (events % 250_000 === 0) log(`  baseline: copied ${events.toLocaleString('en')} events`);
    }
    for (const [source, lines] of pending) if (lines.length > 0) await flush(source, lines);
    for (const child of copies.values()) child.stdin.end();
    await Promise.all(done);
    const loadMs = performance.now() - started;
    const indexStart = performance.now();
    for (const source of SOURCE_NAMES) {
      const t = baselineTable(source);
      await client.query(`ALTER TABLE ${t} ADD PRIMARY KEY (id)`);
      await client.query(`CREATE INDEX ${t}_timestamp_brin ON ${t} USING brin ("timestamp")`);
      await client.query(`VACUUM ANALYZE ${t}`);
    }
    const indexMs = performance.now() - indexStart;
    const size = await client.query<{ bytes: string }>(
      `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c WHERE c.relname LIKE 'log_events_%' AND c.relkind = 'r'`,
    );
    return { events, loadMs, indexMs, bytes: Number(size.rows[0]?.bytes ?? Number.NaN) };
  } finally {
    await client.end();
  }
}
