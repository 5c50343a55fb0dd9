/**
 * deploy/supabase/docker-compose.quarry.yml against what Supabase's own self-hosting files say
 * (test/deploy/supabase-facts.json, read from supabase/supabase at the commits it names): the
 * service keeps Logflare's name, port and health-gate, every Logflare setting is mapped or
 * documented as meaningless, the tokens Vector and Studio send are the ones Quarry accepts, and
 * every source Vector ships to exists. Then Quarry runs with exactly the override's environment
 * (HOST, PORT and DATA_DIR aside: loopback, a free port, a scratch folder), gets one Vector-shaped
 * request per Vector sink, and Studio's request reads each back through `logs.all`. No Docker.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run } from '../../bench/procs.ts';
import { loadConfig, type Env } from '../../src/config.ts';
import { supabaseSources } from '../../src/metadata/sources.ts';
import { startTestServer, tempDataDir, type TestServer } from '../support/server.ts';
import { repoRoot } from '../support/repo.ts';
import { composeInterpolate, isMap, parseYamlSubset, type YamlValue } from './supabase-yaml.ts';

const root = repoRoot;
const overrideText = readFileSync(path.join(root, 'deploy/supabase/docker-compose.quarry.yml'), 'utf8');
const readme = readFileSync(path.join(root, 'deploy/supabase/README.md'), 'utf8');

interface Facts {
  analytics: {
    service: string;
    port: number;
    environment: Record<string, string>;
    environment_commented_out: string[];
    healthcheck: { program: string; url: string };
  };
  dependants: { service_healthy_on_analytics: string[] };
  vector: { token_env: string; header: string; sinks: { sink: string; uri: string }[] };
  studio: { LOGFLARE_URL: string; token_env: string; header: string; project_ref: string; environment: Record<string, string> };
  top_level_volumes: string[];
}
const facts = JSON.parse(readFileSync(path.join(import.meta.dirname, 'supabase-facts.json'), 'utf8')) as Facts;

function map(v: YamlValue | undefined, what: string): { [key: string]: YamlValue } {
  assert.ok(isMap(v), `${what} is a mapping`);
  return v;
}
function list(v: YamlValue | undefined, what: string): YamlValue[] {
  assert.ok(Array.isArray(v), `${what} is a list`);
  return v;
}
function str(v: YamlValue | undefined, what: string): string {
  assert.equal(typeof v, 'string', `${what} is a scalar`);
  return v as string;
}

const doc = map(parseYamlSubset(overrideText), 'the override');
const services = map(doc.services, 'services');
const analytics = map(services[facts.analytics.service], `services.${facts.analytics.service}`);
const overrideEnv = map(analytics.environment, 'analytics.environment');

/** A self-hoster's .env, as far as these services read it. */
const dotEnv: Record<string, string> = {
  LOGFLARE_PUBLIC_ACCESS_TOKEN: 'dotenv-public-token-0123456789',
  LOGFLARE_PRIVATE_ACCESS_TOKEN: 'dotenv-private-token-0123456789',
  POSTGRES_HOST: 'db',
  POSTGRES_PORT: '5432',
  POSTGRES_PASSWORD: 'dotenv-postgres-password',
};

/** The override's analytics environment as Compose hands it to the container. */
function containerEnv(vars: Record<string, string> = dotEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(overrideEnv).map(([k, v]) => [k, composeInterpolate(str(v, k), vars)]));
}

/** Compose's merge of docker-compose.yml's analytics environment with the override's (the override wins per key). */
function mergedEnv(): Record<string, string> {
  const upstream = Object.fromEntries(Object.entries(facts.analytics.environment).map(([k, v]) => [k, composeInterpolate(v, dotEnv)]));
  return { ...upstream, ...containerEnv() };
}

/** The config Quarry builds from `env`, comparable with JSON (paths made absolute the same way). */
function configOf(env: Env): string {
  return JSON.stringify(loadConfig(env));
}

/** The environment variables Quarry's configuration reads, among `names` (one refused as malformed is read too). */
function readByQuarry(names: string[], base: Env): string[] {
  const reference = configOf(base);
  return names.filter((name) => {
    try {
      return configOf({ ...base, [name]: 'x-value-0123456789' }) !== reference;
    } catch {
      return true;
    }
  });
}

describe('the override, against Supabase’s compose files', () => {
  test('replaces the analytics service under its own name, on its port', () => {
    assert.equal(facts.analytics.service, 'analytics');
    assert.equal(facts.analytics.port, 4000);
    const env = containerEnv();
    assert.equal(env.PORT, String(facts.analytics.port));
    assert.equal(env.HOST, '0.0.0.0', 'listens beyond the container’s loopback');
    assert.equal(loadConfig(env).port, facts.analytics.port);
    assert.equal(analytics.ports, undefined, 'publishes no port (Logflare’s was not published either)');
    // Vector and Studio address it by service name and port.
    for (const { sink, uri } of facts.vector.sinks) {
      const u = new URL(uri);
      assert.equal(u.hostname, facts.analytics.service, sink);
      assert.equal(Number(u.port), facts.analytics.port, sink);
    }
    const studio = new URL(facts.studio.LOGFLARE_URL);
    assert.equal(studio.hostname, facts.analytics.service);
    assert.equal(Number(studio.port), facts.analytics.port);
  });

  test('runs the image built from the Dockerfile, never pulled from a registry', () => {
    const image = composeInterpolate(str(analytics.image, 'image'), {});
    assert.match(image, /quarry/);
    assert.equal(analytics.pull_policy, 'never');
  });

  test('keeps a health check its dependants can wait on, without curl', () => {
    const hc = map(analytics.healthcheck, 'healthcheck');
    assert.notEqual(hc.disable, 'true');
    const cmd = list(hc.test, 'healthcheck.test').map((v, i) => str(v, `healthcheck.test[${i}]`));
    assert.equal(cmd[0], 'CMD', 'exec form: no shell needed');
    assert.equal(cmd[1], 'node');
    assert.ok(!cmd.some((a) => /\b(curl|wget)\b/.test(a)), 'neither curl nor wget');
    assert.match(cmd.join(' '), new RegExp(`http://127\\.0\\.0\\.1:${facts.analytics.port}/health`));
    for (const k of ['interval', 'timeout', 'retries', 'start_period']) assert.ok(hc[k] !== undefined, `healthcheck.${k}`);
    // The stack's health-gated services all wait on this one: none of them is redefined here.
    for (const s of facts.dependants.service_healthy_on_analytics) assert.equal(services[s], undefined, s);
  });

  test('every setting Logflare’s service gets is mapped for Quarry or emptied and documented', () => {
    const upstreamNames = Object.keys(facts.analytics.environment);
    const read = readByQuarry(upstreamNames, { DATA_DIR: '/data' });
    // Of Logflare's settings, Quarry reads exactly the two tokens...
    assert.deepEqual(read.sort(), ['LOGFLARE_PRIVATE_ACCESS_TOKEN', 'LOGFLARE_PUBLIC_ACCESS_TOKEN']);
    for (const name of upstreamNames) {
      const value = overrideEnv[name];
      if (read.includes(name)) {
        // ...and takes them from the same .env variables as Logflare did.
        assert.equal(value, facts.analytics.environment[name], name);
      } else {
        assert.equal(value, '', `${name} is emptied (Quarry does not read it)`);
        assert.ok(readme.includes(`\`${name}\``), `${name} is listed in deploy/supabase/README.md`);
      }
    }
    for (const name of facts.analytics.environment_commented_out) assert.ok(readme.includes(`\`${name}\``), name);
    // What stays of Logflare's environment after Compose's merge changes nothing in Quarry.
    assert.equal(configOf(mergedEnv()), configOf(containerEnv()));
    // The database password no longer reaches the analytics container.
    assert.ok(!Object.values(mergedEnv()).some((v) => v.includes(dotEnv.POSTGRES_PASSWORD as string)));
  });

  test('every variable the override sets is one Quarry reads', () => {
    const env = containerEnv();
    const set = Object.keys(env).filter((k) => env[k] !== '');
    const base: Env = { DATA_DIR: '/data', HOST: '0.0.0.0', PORT: '4000' };
    assert.deepEqual(
      set.filter((k) => !(k in base) && readByQuarry([k], base).length === 0),
      [],
      'no setting Quarry ignores',
    );
    const config = loadConfig(env);
    assert.equal(config.dataDir, '/data');
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.logLevel, env.LOG_LEVEL);
  });

  test('Vector’s and Studio’s tokens are the ones Quarry is given', () => {
    assert.equal(facts.vector.token_env, 'LOGFLARE_PUBLIC_ACCESS_TOKEN');
    assert.equal(facts.studio.token_env, 'LOGFLARE_PRIVATE_ACCESS_TOKEN');
    const config = loadConfig(containerEnv());
    assert.equal(config.publicAccessToken, dotEnv[facts.vector.token_env]);
    assert.equal(config.privateAccessToken, dotEnv[facts.studio.token_env]);
    assert.equal(facts.studio.environment[facts.studio.token_env], `\${${facts.studio.token_env}}`);
  });

  test('every source Vector ships to is one Quarry creates', () => {
    const seeded = new Set<string>(supabaseSources.map((s) => s.name));
    for (const { sink, uri } of facts.vector.sinks) {
      const name = new URL(uri).searchParams.get('source_name');
      assert.ok(name !== null && seeded.has(name), `${sink} → ${name}`);
    }
  });

  test('keeps its data in a named volume at /data', () => {
    const mounts = list(analytics.volumes, 'volumes').map((v, i) => str(v, `volumes[${i}]`));
    const data = mounts.find((m) => m.split(':')[1] === '/data');
    assert.ok(data, 'a volume at /data');
    const name = data.split(':')[0] as string;
    assert.match(name, /^[a-z0-9][a-z0-9_.-]*$/, 'a named volume, not a host path');
    assert.ok(isMap(map(doc.volumes, 'volumes')[name]), `top-level volume ${name}`);
    assert.ok(!facts.top_level_volumes.includes(name), 'a name of its own');
    assert.equal(containerEnv().DATA_DIR, '/data');
  });

  test('retention: a week by default, QUARRY_RETENTION_DAYS in .env changes it, and nothing runs beside analytics for it', () => {
    assert.equal(containerEnv().SUPABASE_RETENTION_DAYS, '7');
    assert.equal(containerEnv({ ...dotEnv, QUARRY_RETENTION_DAYS: '30' }).SUPABASE_RETENTION_DAYS, '30');
    assert.equal(loadConfig({ ...containerEnv(), DATA_DIR: '/tmp/x' }).supabaseRetentionDays, 7);
    assert.equal(loadConfig({ ...containerEnv({ ...dotEnv, QUARRY_RETENTION_DAYS: '0' }), DATA_DIR: '/tmp/x' }).supabaseRetentionDays, undefined);
    assert.throws(() => loadConfig({ ...containerEnv({ ...dotEnv, QUARRY_RETENTION_DAYS: 'a week' }), DATA_DIR: '/tmp/x' }), /SUPABASE_RETENTION_DAYS/);
    assert.deepEqual(Object.keys(services), ['analytics']);
  });
});

/** Runs node with `args` and only `env` (and PATH); resolves with the exit code. */
async function runNode(args: string[], env: Record<string, string>): Promise<{ code: number }> {
  return run(process.execPath, args, undefined, { env: { PATH: process.env.PATH ?? '', ...env } });
}

/** One event per Vector sink, shaped as vector.yml's transforms shape them (project where each CTE reads it). */
function vectorEvent(source: string, marker: string): Record<string, unknown> {
  const base = { timestamp: new Date().toISOString(), event_message: `${marker} ${source}` };
  switch (source) {
    case 'cloudflare.logs.prod':
      return {
        ...base,
        project: 'default',
        appname: 'supabase-kong',
        metadata: {
          request: {
            headers: { referer: '-', user_agent: 'curl/8.5.0', cf_connecting_ip: '172.18.0.1' },
            method: 'GET',
            path: '/rest/v1/todos',
            protocol: 'HTTP/1.1',
          },
          response: { status_code: 200 },
        },
      };
    case 'gotrue.logs.prod':
      return { ...base, project: 'default', appname: 'supabase-auth', metadata: { level: 'info', msg: 'request completed', status: 200, path: '/token' } };
    case 'postgREST.logs.prod':
      return { ...base, project: 'default', appname: 'supabase-rest', metadata: { host: 'default' } };
    case 'realtime.logs.prod':
      return { ...base, appname: 'realtime-dev.supabase-realtime', metadata: { project: 'default', external_id: 'default', level: 'info' } };
    case 'storage.logs.prod.2':
      return { ...base, appname: 'supabase-storage', metadata: { project: 'default', tenantId: 'default', level: 'info', context: [{ host: 'c1', pid: 1 }] } };
    case 'deno-relay-logs':
      return { ...base, appname: 'supabase-edge-functions', metadata: { project_ref: 'default' } };
    case 'postgres.logs':
      return {
        ...base,
        project: 'default',
        appname: 'supabase-db',
        metadata: { host: 'db-default', parsed: { timestamp: base.timestamp, error_severity: 'LOG' } },
      };
    default:
      throw new Error(`no Vector shape for ${source}`);
  }
}

describe('Quarry started with the override’s environment', () => {
  let server: TestServer;
  const env = containerEnv();

  before(async () => {
    // The container's address and volume become loopback, a free port and a scratch folder.
    const { HOST: _h, PORT: _p, DATA_DIR: _d, ...rest } = env;
    server = await startTestServer({ ...rest, HOST: '127.0.0.1', PORT: '0' });
  });
  after(() => server.close());

  test('the health check one-liner says healthy, and unhealthy when nothing answers', async () => {
    const cmd = list(map(analytics.healthcheck, 'healthcheck').test, 'test').map((v) => v as string);
    const port = new URL(server.url).port;
    const here = cmd.slice(2).map((a) => a.replace(`127.0.0.1:${facts.analytics.port}`, `127.0.0.1:${port}`));
    assert.equal((await runNode(here, {})).code, 0);
    const nobody = cmd.slice(2).map((a) => a.replace(`127.0.0.1:${facts.analytics.port}`, '127.0.0.1:9'));
    assert.equal((await runNode(nobody, {})).code, 1);
  });

  test('each Vector sink’s request is logged, and Studio’s request reads it back', async () => {
    const marker = `swap-${Date.now()}`;
    const since = new Date(Date.now() - 60_000).toISOString();
    for (const { sink, uri } of facts.vector.sinks) {
      const u = new URL(uri);
      const source = u.searchParams.get('source_name') as string;
      // As Vector's http sink sends it: POST, a JSON array body, the public token in x-api-key.
      const res = await fetch(`${server.url}${u.pathname}${u.search}`, {
        method: 'POST',
        headers: { [facts.vector.header]: dotEnv[facts.vector.token_env] as string, 'content-type': 'application/json' },
        body: JSON.stringify([vectorEvent(source, marker)]),
      });
      assert.equal(res.status, 200, `${sink}: ${await res.clone().text()}`);
      assert.deepEqual(await res.json(), { message: 'Logged!' });
    }
    for (const { sink, uri } of facts.vector.sinks) {
      const source = new URL(uri).searchParams.get('source_name') as string;
      const cte = supabaseSources.find((s) => s.name === source)?.cte as string;
      // As Studio sends it: GET ${LOGFLARE_URL}/api/endpoints/query/logs.all?project=…, the private token in x-api-key.
      const q = new URL(`${server.url}/api/endpoints/query/logs.all`);
      q.searchParams.set('project', facts.studio.project_ref);
      q.searchParams.set('iso_timestamp_start', since);
      q.searchParams.set('sql', `select id, timestamp, event_message from ${cte} where event_message like '${marker}%' order by timestamp desc limit 10`);
      const res = await fetch(q, {
        headers: { [facts.studio.header]: dotEnv[facts.studio.token_env] as string, 'Content-Type': 'application/json', Accept: 'application/json' },
      });
      const body = (await res.json()) as { result?: { event_message: string }[] };
      assert.equal(res.status, 200, `${sink}: ${JSON.stringify(body)}`);
      assert.deepEqual(
        body.result?.map((r) => r.event_message),
        [`${marker} ${source}`],
        `${sink} → ${cte}`,
      );
    }
    // The logs.all default Studio opens with shows the edge row.
    const res = await fetch(`${server.url}/api/endpoints/query/logs.all?project=default`, {
      headers: { 'x-api-key': dotEnv.LOGFLARE_PRIVATE_ACCESS_TOKEN as string },
    });
    assert.equal(res.status, 200);
    // Vector's token may ingest but not read.
    const refused = await fetch(`${server.url}/api/endpoints/query/logs.all?project=default`, {
      headers: { 'x-api-key': dotEnv.LOGFLARE_PUBLIC_ACCESS_TOKEN as string },
    });
    assert.equal(refused.status, 403);
  });

  test('the nine sources keep the override’s retention; 0 leaves a source’s own', async () => {
    const retention = async (on: TestServer) => {
      const res = await on.fetch('/api/sources', {}, dotEnv.LOGFLARE_PRIVATE_ACCESS_TOKEN as string);
      const rows = (await res.json()) as { id: string; name: string; retention_days: number | null }[];
      return Object.fromEntries(rows.map((r) => [r.name, r]));
    };
    for (const s of supabaseSources) assert.equal((await retention(server))[s.name]?.retention_days, 7, s.name);
    // Restarted with 0 on the same data: a source's own setting stands.
    const dir = await tempDataDir();
    const { HOST: _h, PORT: _p, DATA_DIR: _d, ...rest } = env;
    const first = await startTestServer({ ...rest, HOST: '127.0.0.1', PORT: '0' }, dir);
    const edge = (await retention(first))['cloudflare.logs.prod'];
    const patched = await first.fetch(
      `/api/sources/${edge?.id}`,
      { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ retention_days: 30 }) },
      dotEnv.LOGFLARE_PRIVATE_ACCESS_TOKEN as string,
    );
    assert.equal(patched.status, 200);
    await first.stop();
    const second = await startTestServer({ ...rest, SUPABASE_RETENTION_DAYS: '0', HOST: '127.0.0.1', PORT: '0' }, dir);
    try {
      assert.equal((await retention(second))['cloudflare.logs.prod']?.retention_days, 30);
      assert.equal((await retention(second))['postgres.logs']?.retention_days, 7);
    } finally {
      await second.close();
    }
  });
});
