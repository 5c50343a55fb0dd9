/**
 * `/logplex` and `/syslogs` (syslog drains: Heroku's Logplex, `application/logplex-1`, and other
 * RFC 5424 senders). The body is octet-counted frames (`<length> <message>`, RFC 6587, what Logplex
 * sends) or one message per line. Each RFC 5424 message becomes one event as Logflare's syslog
 * parser makes it: `event_message` the message text (ANSI colour codes removed), `timestamp` the
 * header's, `metadata` {priority, facility, severity, level, hostname, appname, process_id,
 * message_id, message_text, message_raw, sd, logfmt}. Structured data is `sd`, a list of
 * `{id, <param>: <value>}`, with a JSON object found in the message added as `{id: "json", …}`;
 * Heroku's own processes (`router`, `heroku-*`) get their logfmt message read into `logfmt`.
 * Where Logflare silently drops a line it cannot parse, Quarry refuses the body naming the message.
 */
import { type IntegrationRequest, type RawEvent, bad } from './shared.ts';

const FACILITIES = [
  'kernel',
  'user',
  'mail',
  'system',
  'auth',
  'syslogd',
  'line_printer',
  'network_news',
  'uucp',
  'clock',
  'auth',
  'ftp',
  'ntp',
  'log_audit',
  'log_alert',
  'clock',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
];
const SEVERITIES = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];
const HEADER = /^<(\d{1,3})>(\d{1,2}) (\S+) (\S+) (\S+) (\S+) (\S+)(?: ([\s\S]*))?$/;
// Colour codes (ESC [ … m) as Heroku apps send them; ESC is built, since a literal one in a regex is linted.
const ESC = String.fromCharCode(0x1b);
const ANSI = new RegExp(`${ESC}\\[[0-9;]*m(?:${ESC}\\[K)?`, 'g');

export function syslogEvents(req: IntegrationRequest): RawEvent[] {
  const messages = syslogFrames(req.text);
  if (messages.length === 0) throw bad('The syslog body holds no messages.');
  return messages.map((m, i) => syslogEvent(m, i));
}

/** The messages of a body: octet-counted frames when it starts with `<digits> <`, else lines. */
export function syslogFrames(text: string): string[] {
  if (!/^\s*\d+ </.test(text)) {
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  }
  const bytes = Buffer.from(text, 'utf8');
  const out: string[] = [];
  let at = 0;
  while (at < bytes.length) {
    while (at < bytes.length && (bytes[at] === 0x0a || bytes[at] === 0x0d || bytes[at] === 0x20)) at++;
    if (at >= bytes.length) break;
    const space = bytes.indexOf(0x20, at);
    const length = space === -1 ? Number.NaN : Number(bytes.subarray(at, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= 0) throw bad(`Syslog frame ${out.length + 1} does not start with its length in bytes ("<length> <message>").`);
    if (space + 1 + length > bytes.length) throw bad(`Syslog frame ${out.length + 1} says it is ${length} bytes long but the body ends first.`);
    out.push(
      bytes
        .subarray(space + 1, space + 1 + length)
        .toString('utf8')
        .trim(),
    );
    at = space + 1 + length;
  }
  return out;
}

export function syslogEvent(message: string, index = 0): RawEvent {
  const m = HEADER.exec(message);
  const where = `Syslog message ${index + 1}`;
  if (m === null) throw bad(`${where} is not RFC 5424 syslog ("<priority>version timestamp host app procid msgid …").`);
  const priority = Number(m[1]);
  if (priority > 191) throw bad(`${where} has priority ${priority}; it must be 0 to 191.`);
  const [time, hostname, appname, processId, messageId] = [m[3], m[4], m[5], m[6], m[7]].map(nil);
  const { sd, text } = structuredData(m[8] ?? '', where);
  const severity = SEVERITIES[priority % 8] as string;
  const metadata: RawEvent = { priority, facility: FACILITIES[Math.floor(priority / 8)], severity, level: severity };
  const named: [string, string | undefined][] = [
    ['hostname', hostname],
    ['appname', appname],
    ['process_id', processId],
    ['message_id', messageId],
  ];
  for (const [k, v] of named) if (v !== undefined) metadata[k] = v;
  const messageText = text?.replace(/^\uFEFF/, '');
  const json = messageText === undefined ? undefined : jsonIn(messageText);
  if (json !== undefined) sd.unshift({ ...json, id: 'json' });
  if (sd.length > 0) metadata.sd = sd;
  if (messageText !== undefined) metadata.message_text = messageText;
  metadata.message_raw = message;
  if (messageText !== undefined && (processId === 'router' || processId?.startsWith('heroku'))) metadata.logfmt = logfmt(messageText);
  const event: RawEvent = { event_message: messageText?.replace(ANSI, '') ?? null, metadata };
  if (time !== undefined) event.timestamp = time;
  return event;
}

function nil(v: string | undefined): string | undefined {
  return v === undefined || v === '-' ? undefined : v;
}

/** The structured data at the start of `rest` (`-`, `[id k="v" …]…`, or none, as Heroku sends), and the message after it. */
function structuredData(rest: string, where: string): { sd: RawEvent[]; text: string | undefined } {
  if (rest === '-' || rest.startsWith('- ')) return { sd: [], text: rest.length > 2 ? rest.slice(2) : undefined };
  if (!rest.startsWith('[')) return { sd: [], text: rest === '' ? undefined : rest };
  const sd: RawEvent[] = [];
  let at = 0;
  while (rest[at] === '[') {
    const element: RawEvent = {};
    const id = /^\[([^\s\]=]+)/.exec(rest.slice(at));
    if (id === null) throw bad(`${where} has a structured data element without a name.`);
    element.id = id[1];
    at += id[0].length;
    for (;;) {
      if (rest[at] === ']') {
        at++;
        break;
      }
      const param = /^ ([^\s\]="]+)="/.exec(rest.slice(at));
      if (param === null) throw bad(`${where} has malformed structured data near "${rest.slice(at, at + 20)}".`);
      at += param[0].length;
      let value = '';
      while (at < rest.length && rest[at] !== '"') {
        if (rest[at] === '\\' && ['"', '\\', ']'].includes(rest[at + 1] ?? '')) at++;
        value += rest[at];
        at++;
      }
      if (at >= rest.length) throw bad(`${where} has an unterminated structured data value.`);
      at++;
      element[param[1] as string] = value;
    }
    sd.push(element);
  }
  const text = rest.slice(at).replace(/^ /, '');
  return { sd, text: text === '' ? undefined : text };
}

function jsonIn(text: string): RawEvent | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start === -1 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as RawEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** `key=value key="quoted value" flag` → {key: value, …}; a bare key is `true`. */
export function logfmt(text: string): RawEvent {
  const out: RawEvent = {};
  for (const m of text.matchAll(/([^\s=]+)(?:=(?:"((?:[^"\\]|\\.)*)"|(\S*)))?/g)) {
    const key = m[1] as string;
    out[key] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3] !== undefined ? m[3] : true;
  }
  return out;
}
