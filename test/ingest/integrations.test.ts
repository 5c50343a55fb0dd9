/**
 * Logflare's integration mappings (src/ingest/integrations/), pure: real-shaped bodies of each
 * sender → the events stored, and the 400s for bodies that do not map.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuarryError } from '../../src/errors.ts';
import { browserReportEvents } from '../../src/ingest/integrations/browser-reports.ts';
import { cloudEventEvents } from '../../src/ingest/integrations/cloud-event.ts';
import { cloudflareEvents } from '../../src/ingest/integrations/cloudflare.ts';
import { githubEvents } from '../../src/ingest/integrations/github.ts';
import { genericJsonEvents } from '../../src/ingest/integrations/json.ts';
import { netlifyEvents } from '../../src/ingest/integrations/netlify.ts';
import type { IntegrationRequest } from '../../src/ingest/integrations/shared.ts';
import { logfmt, syslogEvents, syslogFrames } from '../../src/ingest/integrations/syslog.ts';
import { typecastEvents } from '../../src/ingest/integrations/typecasts.ts';
import { vectorEvents } from '../../src/ingest/integrations/vector.ts';
import { vercelEvents } from '../../src/ingest/integrations/vercel.ts';

function req(body: unknown, contentType = 'application/json', headers: Record<string, string> = {}): IntegrationRequest {
  return { text: typeof body === 'string' ? body : JSON.stringify(body), contentType, headers: { 'content-type': contentType, ...headers } };
}

function refused(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof QuarryError && e.code === 'BAD_REQUEST' && pattern.test(e.message));
}

describe('/json (GenericJson)', () => {
  it('keeps each event under metadata with its JSON text as the message', () => {
    const event = { level: 'info', message: 'hi', context: { user: 1 } };
    assert.deepEqual(genericJsonEvents(req(event)), [{ event_message: JSON.stringify(event), metadata: event }]);
  });
  it('reads arrays and {"batch": [...]}, and uses an event timestamp', () => {
    const events = genericJsonEvents(req({ batch: [{ a: 1 }, { a: 2, timestamp: '2025-01-01T00:00:00Z' }] }));
    assert.equal(events.length, 2);
    assert.equal(events[1]?.timestamp, '2025-01-01T00:00:00Z');
    assert.equal(genericJsonEvents(req([{ a: 1 }])).length, 1);
  });
  it('refuses a body that is not JSON objects', () => {
    refused(() => genericJsonEvents(req('[1]')), /index 0 is not a JSON object/);
    refused(() => genericJsonEvents(req('nope')), /not valid JSON/);
  });
});

describe('/vector', () => {
  it('takes message and timestamp, the rest under metadata, project also on top', () => {
    const [e] = vectorEvents(req([{ message: 'GET /', timestamp: '2025-11-21T10:00:00Z', project: 'p1', host: 'h' }]));
    assert.deepEqual(e, { event_message: 'GET /', metadata: { project: 'p1', host: 'h' }, timestamp: '2025-11-21T10:00:00Z', project: 'p1' });
  });
  it('without message: the JSON of the rest; without timestamp: none (the receive time)', () => {
    const [e] = vectorEvents(req('{"host":"h","n":1}\n', 'application/x-ndjson'));
    assert.deepEqual(e, { event_message: '{"host":"h","n":1}', metadata: { host: 'h', n: 1 } });
  });
});

describe('/cloudflare (Logpush)', () => {
  it('reads text/plain as NDJSON and keeps records as they are', () => {
    const body = '{"RayID":"a1","EdgeResponseStatus":200}\n{"RayID":"a2","EdgeResponseStatus":404}\n';
    assert.deepEqual(cloudflareEvents(req(body, 'text/plain; charset=utf-8')), [
      { RayID: 'a1', EdgeResponseStatus: 200 },
      { RayID: 'a2', EdgeResponseStatus: 404 },
    ]);
  });
  it('names the bad line', () => refused(() => cloudflareEvents(req('{"a":1}\n{oops\n', 'text/plain')), /Line 2/));
});

describe('/cloud-event', () => {
  const headers = {
    'ce-specversion': '1.0',
    'ce-id': 'e1',
    'ce-source': '/orders',
    'ce-type': 'order.created',
    'ce-time': '2025-11-21T10:00:00Z',
    'ce-trace-parent': 'x',
  };
  it('binary mode: ce-* headers as cloud_event, body keys on top, time as timestamp', () => {
    const [e] = cloudEventEvents(req({ order: 7 }, 'application/json', headers));
    assert.deepEqual(e, {
      order: 7,
      cloud_event: { specversion: '1.0', id: 'e1', source: '/orders', type: 'order.created', time: '2025-11-21T10:00:00Z', trace_parent: 'x' },
      timestamp: '2025-11-21T10:00:00Z',
    });
  });
  it('structured mode and batches', () => {
    const envelope = { specversion: '1.0', id: 'e2', source: '/s', type: 't', data: { order: 8 } };
    assert.deepEqual(cloudEventEvents(req(envelope, 'application/cloudevents+json')), [
      { order: 8, cloud_event: { specversion: '1.0', id: 'e2', source: '/s', type: 't' } },
    ]);
    const batch = cloudEventEvents(req([envelope, { ...envelope, data: 'text' }], 'application/cloudevents-batch+json'));
    assert.deepEqual(batch[1], { data: 'text', cloud_event: { specversion: '1.0', id: 'e2', source: '/s', type: 't' } });
  });
  it('refuses a request without attributes', () => {
    refused(() => cloudEventEvents(req({ order: 1 })), /ce-specversion/);
    refused(() => cloudEventEvents(req({ data: {} }, 'application/cloudevents+json')), /specversion/);
  });
});

describe('/vercel', () => {
  it('writes the proxy message and joins the user agent', () => {
    const log = {
      id: '1',
      source: 'edge',
      timestamp: 1732183200000,
      proxy: { statusCode: 200, host: 'app.vercel.app', path: '/x', clientIp: '1.2.3.4', userAgent: ['curl/8', 'x'] },
    };
    const [e] = vercelEvents(req([log]));
    assert.equal(e?.event_message, 'edge | 200 | app.vercel.app | /x | 1.2.3.4 | curl/8,x');
    assert.equal((e?.metadata as { proxy: { userAgent: string } } | undefined)?.proxy.userAgent, 'curl/8,x');
    assert.equal(e?.timestamp, 1732183200000);
  });
  it('keeps build and lambda messages (Logflare loses them)', () => {
    const events = vercelEvents(req('{"source":"build","message":"Compiled"}\n{"source":"lambda","message":"START"}\n', 'application/x-ndjson'));
    assert.deepEqual(
      events.map((e) => e.event_message),
      ['build | Compiled', 'lambda | START'],
    );
  });
});

describe('/netlify', () => {
  it('function, traffic, other and validation logs', () => {
    const base = { timestamp: '2025-11-21T10:00:00Z', method: 'GET', status_code: 200, request_id: 'r1' };
    const events = netlifyEvents(
      req([
        { ...base, log_type: 'functions', path: '/f' },
        { ...base, log_type: 'traffic', client_ip: '1.1.1.1', url: '/u', user_agent: 'ua' },
        { timestamp: '2025-11-21T10:00:00Z', log_type: 'deploys', state: 'ok' },
        { message: 'validation' },
      ]),
    );
    assert.deepEqual(
      events.map((e) => e.event_message),
      ['functions | GET | 200 | r1 | /f', 'traffic | GET | 200 | 1.1.1.1 | r1 | /u | ua', '{"log_type":"deploys","state":"ok"}', 'validation'],
    );
    assert.deepEqual(events[3]?.metadata, { log_type: 'validate' });
    assert.equal((events[0]?.metadata as Record<string, unknown> | undefined)?.timestamp, undefined);
  });
  it('refuses a log it cannot read', () => refused(() => netlifyEvents(req([{ a: 1 }])), /index 0/));
});

describe('/github', () => {
  const payload = {
    action: 'opened',
    repository: { full_name: 'o/r', html_url: 'u', owner: { avatar_url: 'a', login: 'o' } },
    sender: { login: 'me', url: 'u' },
  };
  it('message and metadata without *_url keys', () => {
    assert.deepEqual(githubEvents(req(payload)), [
      {
        event_message: 'o/r | me | opened',
        metadata: { action: 'opened', repository: { full_name: 'o/r', owner: { login: 'o' } }, sender: { login: 'me', url: 'u' } },
      },
    ]);
  });
  it('reads the form encoding', () => {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    assert.equal(githubEvents(req(body, 'application/x-www-form-urlencoded'))[0]?.event_message, 'o/r | me | opened');
    refused(() => githubEvents(req('a=1', 'application/x-www-form-urlencoded')), /payload/);
    refused(() => githubEvents(req([1])), /JSON object/);
  });
});

describe('/browser/reports', () => {
  it('CSP and Reporting API bodies', () => {
    const csp = { 'csp-report': { 'document-uri': 'https://a/', 'violated-directive': 'script-src' } };
    assert.deepEqual(browserReportEvents(req(csp, 'application/csp-report')), [{ event_message: JSON.stringify(csp), metadata: csp }]);
    const reports = [{ type: 'deprecation', age: 1, url: 'https://a/', user_agent: 'ua', body: { id: 'x' } }];
    assert.deepEqual(browserReportEvents(req(reports, 'application/reports+json'))[0]?.metadata, reports[0]);
  });
});

describe('/typecasts', () => {
  it('casts strings to floats at the paths', () => {
    const body = { batch: [{ body: { message: 'm', metadata: { n: '1.5', s: 'x' } }, typecasts: [{ path: ['metadata', 'n'], from: 'string', to: 'float' }] }] };
    assert.deepEqual(typecastEvents(req(body)), [{ message: 'm', metadata: { n: 1.5, s: 'x' } }]);
  });
  it('refuses what Logflare crashes on', () => {
    const body = { batch: [{ body: { metadata: { n: 'abc' } }, typecasts: [{ path: ['metadata', 'n'], from: 'string', to: 'float' }] }] };
    refused(() => typecastEvents(req(body)), /metadata\.n is not a number/);
    refused(() => typecastEvents(req({ a: 1 })), /batch/);
  });
});

describe('/logplex and /syslogs', () => {
  const m1 = '<40>1 2012-11-30T06:45:29+00:00 host app web.3 - State changed from starting to up\n';
  const m2 = '<158>1 2012-11-30T06:45:26+00:00 host heroku router - at=info method=GET path="/a b" status=200\n';
  const framed = (...ms: string[]) => ms.map((m) => `${Buffer.byteLength(m)} ${m}`).join('');
  it('reads Heroku octet-counted frames, with logfmt for the router', () => {
    const events = syslogEvents(req(framed(m1, m2), 'application/logplex-1'));
    assert.deepEqual(events[0], {
      event_message: 'State changed from starting to up',
      timestamp: '2012-11-30T06:45:29+00:00',
      metadata: {
        priority: 40,
        facility: 'syslogd',
        severity: 'emergency',
        level: 'emergency',
        hostname: 'host',
        appname: 'app',
        process_id: 'web.3',
        message_text: 'State changed from starting to up',
        message_raw: m1.trim(),
      },
    });
    assert.deepEqual((events[1]?.metadata as Record<string, unknown> | undefined)?.logfmt, { at: 'info', method: 'GET', path: '/a b', status: '200' });
  });
  it('counts frame lengths in bytes, so a message may hold newlines and non-ASCII text', () => {
    const m = '<14>1 2025-11-21T10:00:00Z h a p - - héllo\nworld';
    assert.deepEqual(syslogFrames(framed(m, m)), [m, m]);
    refused(() => syslogFrames('500 <14>1 short'), /body ends first/);
  });
  it('reads RFC 5424 structured data and a JSON object in the message, one message per line', () => {
    const line = '<165>1 2003-10-11T22:14:15.003Z mymachine evntslog - ID47 [ex@32473 iut="3" src="A\\"pp"][x@1 a="b"] \uFEFFevent {"k":1}';
    const [e] = syslogEvents(req(`${line}\n\n`, 'text/plain'));
    const metadata = e?.metadata as Record<string, unknown> | undefined;
    assert.equal(e?.event_message, 'event {"k":1}');
    assert.deepEqual(metadata?.sd, [
      { k: 1, id: 'json' },
      { id: 'ex@32473', iut: '3', src: 'A"pp' },
      { id: 'x@1', a: 'b' },
    ]);
    assert.equal(metadata?.message_id, 'ID47');
    assert.equal(metadata?.process_id, undefined);
  });
  it('removes colour codes from the message, keeps them in message_text; "-" time is none', () => {
    const [e] = syslogEvents(req('<14>1 - h a p - - \u001b[32mgreen\u001b[0m done', 'text/plain'));
    assert.equal(e?.event_message, 'green done');
    assert.equal((e?.metadata as Record<string, unknown> | undefined)?.message_text, '\u001b[32mgreen\u001b[0m done');
    assert.equal(e?.timestamp, undefined);
  });
  it('refuses what is not syslog, naming the message', () => {
    refused(() => syslogEvents(req('<14>1 2025-11-21T10:00:00Z h a p - - ok\nnot syslog\n', 'text/plain')), /Syslog message 2 is not RFC 5424/);
    refused(() => syslogEvents(req('<999>1 - - - - - x', 'text/plain')), /priority 999/);
    refused(() => syslogEvents(req('', 'text/plain')), /no messages/);
  });
  it('logfmt', () => assert.deepEqual(logfmt('a=1 b="x \\"y\\"" c'), { a: '1', b: 'x "y"', c: true }));
});
