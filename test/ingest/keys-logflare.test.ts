/**
 * Key renaming under Logflare's rule (src/ingest/keys.ts `logflareKey`), against every example of
 * Logflare's transformer tests: test/logflare/logs/ingest/ingest_transformer_test.exs in
 * github.com/Logflare/logflare (read at commit e9444de8cd96fd1772dba0309ce89132d7c8b676). The rule
 * it tests is `IngestTransformers.transform(params, :clean_to_bigquery_column_spec)`, the one
 * Logflare's ingest applies (lib/logflare/logs/log_event.ex). The inputs and expected names below
 * are that file's; the tables are ours.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { legacyKey, logflareKey, RESERVED_PREFIXES, safeKey, sanitiseKey, sanitiseObject } from '../../src/ingest/keys.ts';
import { eventFields, normaliseEvent } from '../../src/ingest/normalise.ts';
import { decodeLogsJson } from '../../src/ingest/otlp/json.ts';
import { logEvents } from '../../src/ingest/otlp/log-events.ts';

const a = (n: number): string => 'a'.repeat(n);

/** The ":to_bigquery_column_spec fused pipeline" block: one key in, one name out. */
const FUSED: readonly (readonly [input: string, expected: string, upstreamTest: string])[] = [
  ['safe_key', 'safe_key', 'already-valid keys pass through unchanged'],
  ['already_underscored', 'already_underscored', 'already-valid keys pass through unchanged'],
  ['', '', 'empty-string keys pass through'],
  ['_TABLE_x', '__TABLE_x', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_FILE_x', '__FILE_x', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_PARTITIONx', '__PARTITIONx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_PARTITION_x', '__PARTITION_x', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_ROW_TIMESTAMPx', '__ROW_TIMESTAMPx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['__ROOT__x', '___ROOT__x', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_COLIDENTIFIERx', '__COLIDENTIFIERx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_CHANGE_SEQUENCE_NUMBERx', '__CHANGE_SEQUENCE_NUMBERx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_CHANGE_TYPEx', '__CHANGE_TYPEx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['_CHANGE_TIMESTAMPx', '__CHANGE_TIMESTAMPx', 'escapes every BigQuery-reserved prefix by prepending one underscore'],
  ['x_TABLE_y', 'x_TABLE_y', 'only treats reserved prefix when it appears at the start of the key'],
  ['_TABLE_', '__TABLE_', 'reserved prefix with empty suffix still gets prepended'],
  ['1foo', '_1foo', 'leading digit gets a prepended underscore'],
  ['9bar', '_9bar', 'leading digit gets a prepended underscore'],
  ['a-b', '_a_b', 'dashes are replaced with underscores and a leading underscore is prepended'],
  ['a-b-c', '_a_b_c', 'dashes are replaced with underscores and a leading underscore is prepended'],
  ['--', '___', 'dashes are replaced with underscores and a leading underscore is prepended'],
  ['foo!', '_foo_', 'non-alphanumeric bytes are replaced and a leading underscore is prepended'],
  ['a b', '_a_b', 'non-alphanumeric bytes are replaced and a leading underscore is prepended'],
  ['x.y', '_x_y', 'non-alphanumeric bytes are replaced and a leading underscore is prepended'],
  ['é', '__', 'multibyte UTF-8 codepoints each collapse to a single underscore'],
  ['1-key', '_1_key', 'dash prepend suppresses the leading-digit prepend'],
  ['_TABLE_1foo', '__TABLE_1foo', 'bq prefix prepend suppresses the leading-digit prepend'],
  ['_TABLE_-foo', '___TABLE__foo', 'bq prefix + dash both prepend (two leading underscores)'],
  ['1key!', '__1key_', 'leading digit + non-alnum both prepend (two leading underscores)'],
  ['a-b!', '__a_b_', 'dash + non-alnum both prepend (two leading underscores)'],
  ['1-key!', '__1_key_', 'dash + non-alnum + leading-digit-suppressed (still two leading underscores)'],
  ['_TABLE_a!', '___TABLE_a_', 'reserved prefix + non-alnum both prepend (two leading underscores)'],
  ['1é', '__1_', 'leading digit followed by multibyte: digit-prepend + codepoint collapse'],
  [a(128), a(128), 'keys at the 128-byte limit pass through untouched'],
  [a(129), `_${a(128)}`, 'keys over 128 bytes are truncated and prefixed with underscore'],
  [`_TABLE_${a(121)}`, `___TABLE_${a(120)}`, 'prefix-induced length growth triggers truncation, dropping the last byte'],
];

/**
 * "non-ASCII keys produce valid UTF-8, encodable column names": upstream asserts only the shape of
 * the result; the names here are what the rule gives (one `_` per code point, one leading `_`).
 */
const NON_ASCII: readonly (readonly [string, string])[] = [
  ['é', '__'],
  ['日本語', '____'],
  ['🚀', '__'],
  ['ßðemoji😀', '___emoji_'],
  ['naïve-café', '__na_ve_caf_'],
];

/**
 * "invalid-UTF-8 keys do not crash …": keys reach Quarry decoded, each invalid sequence as one
 * U+FFFD (JSON bodies, and OTLP protobuf strings, src/ingest/otlp/protobuf.ts), which the rule
 * turns into one `_`, the names Logflare gives the raw bytes.
 */
const INVALID_UTF8: readonly (readonly [Buffer, string])[] = [
  [Buffer.from([0xc3]), '__'],
  [Buffer.from([0xff, 0xfe]), '___'],
  [Buffer.from([0x6f, 0x6b, 0xff, 0x78]), '_ok_x'],
];

/** "transformation is idempotent": upstream's keys, with `<<0xC3>>` decoded as above. */
const IDEMPOTENT = ['user-é', '_TABLE_x', '1é', '日本', 'a.b!', '9bad', Buffer.from([0xc3]).toString('utf8')];

/**
 * The "BQ spec transformations" block tests Logflare's older one-step transforms
 * (`:dashes_to_underscores`, `:alter_leading_numbers`, `:alphanumeric_only`, `:strip_bq_prefixes`,
 * `{:field_length, max: 5}`), which its ingest no longer applies one by one. Every key of those
 * examples, with the name the one step gives upstream and the name the whole rule gives: they agree
 * except where another step also applies to the key (`sameAsStep` false), and then the whole rule
 * adds its own `_` as the fused examples above say (`1key!` → `__1key_`).
 */
const STEPS: readonly (readonly [input: string, step: string, stepResult: string, whole: string, maxKeyLength?: number])[] = [
  ['status-code', 'to_bigquery_column_spec (transformations order is correct)', '_status_code', '_status_code'],
  ['level-1-dashed-key', 'dashes_to_underscores', '_level_1_dashed_key', '_level_1_dashed_key'],
  ['dashed-key', 'dashes_to_underscores', '_dashed_key', '_dashed_key'],
  ['dashed-key-more-dashes', 'dashes_to_underscores', '_dashed_key_more_dashes', '_dashed_key_more_dashes'],
  ['1level_key', 'alter_leading_numbers', '_1level_key', '_1level_key'],
  ['2level_key', 'alter_leading_numbers', '_2level_key', '_2level_key'],
  ['3level_key', 'alter_leading_numbers', '_3level_key', '_3level_key'],
  ['1level', 'alter_leading_numbers', '_1level', '_1level'],
  ['2level', 'alter_leading_numbers', '_2level', '_2level'],
  ['311level_key', 'alter_leading_numbers', '_311level_key', '_311level_key'],
  ['312level_key', 'alter_leading_numbers', '_312level_key', '_312level_key'],
  ['level_1_key_!@#$%%^&*(', 'alphanumeric_only', '_level_1_key___________', '_level_1_key___________'],
  ['level_2_key+{}:"<>?"', 'alphanumeric_only', '_level_2_key_________', '_level_2_key_________'],
  ['threelevel_key', 'alphanumeric_only', 'threelevel_key', 'threelevel_key'],
  ['1level_key', 'alphanumeric_only', '1level_key', '_1level_key'],
  ['2level_key', 'alphanumeric_only', '2level_key', '_2level_key'],
  ['3level_key ,.~', 'alphanumeric_only', '_3level_key____', '__3level_key____'],
  ['1level', 'alphanumeric_only', '1level', '_1level'],
  ['2level', 'alphanumeric_only', '2level', '_2level'],
  ['3!!level_key', 'alphanumeric_only', '_3__level_key', '__3__level_key'],
  ['level_1_key_', 'strip_bq_prefixes', 'level_1_key_', 'level_1_key_'],
  ['_FILE_level_2_key_FILE_', 'strip_bq_prefixes', '__FILE_level_2_key_FILE_', '__FILE_level_2_key_FILE_'],
  ['_PARTITION_1level_key', 'strip_bq_prefixes', '__PARTITION_1level_key', '__PARTITION_1level_key'],
  ['_FILE_2level_key_PARTITION_', 'strip_bq_prefixes', '__FILE_2level_key_PARTITION_', '__FILE_2level_key_PARTITION_'],
  ['3level_key', 'strip_bq_prefixes', '3level_key', '_3level_key'],
  ['_TABLE_1level', 'strip_bq_prefixes', '__TABLE_1level', '__TABLE_1level'],
  ['2level', 'strip_bq_prefixes', '2level', '_2level'],
  ['metadata', 'field_length 5', '_metad', '_metad', 5],
  ['123456789', 'field_length 5', '_12345', '__1234', 5],
  ['12345678901234', 'field_length 5', '_12345', '__1234', 5],
  ['12345', 'field_length 5', '12345', '__1234', 5],
];

/** Which part of the whole rule each one-step transform is. */
const PART: Record<string, string> = {
  dashes_to_underscores: 'dash',
  alter_leading_numbers: 'digit',
  alphanumeric_only: 'other',
  strip_bq_prefixes: 'prefix',
  'field_length 5': 'long',
};

/** True when no part of the whole rule but the step's applies to the key (then the names must agree). */
function onlyThisStep(input: string, step: string, maxKeyLength: number): boolean {
  const applies = {
    digit: /^[0-9]/.test(input),
    dash: input.includes('-'),
    other: /[^A-Za-z0-9_-]/.test(input),
    prefix: RESERVED_PREFIXES.some((p) => input.startsWith(p)),
    long: input.length > maxKeyLength,
  };
  const part = PART[step];
  if (part === undefined) return true;
  return Object.entries(applies).every(([name, yes]) => !yes || name === part);
}

describe("Logflare's key rule", () => {
  it('gives every name of the fused examples', () => {
    for (const [input, expected, test] of FUSED) {
      assert.equal(logflareKey(input), expected, `${JSON.stringify(input)} (${test})`);
    }
  });

  it('escapes each reserved prefix Logflare lists, and only at the start', () => {
    assert.equal(RESERVED_PREFIXES.length, 9);
    for (const p of RESERVED_PREFIXES) {
      assert.equal(logflareKey(`${p}x`), `_${p}x`);
      assert.equal(logflareKey(`x${p}`), `x${p}`);
    }
    // Logflare matches the prefixes as written: another letter case is an ordinary name.
    assert.equal(logflareKey('_table_x'), '_table_x');
  });

  it('turns each code point outside [A-Za-z0-9_] into one `_`, non-ASCII included', () => {
    for (const [input, expected] of NON_ASCII) {
      const name = logflareKey(input);
      assert.equal(name, expected, input);
      assert.match(name, /^[A-Za-z0-9_]*$/);
    }
    for (const [bytes, expected] of INVALID_UTF8) assert.equal(logflareKey(bytes.toString('utf8')), expected, bytes.toString('hex'));
    // A lone surrogate (possible in a JSON string's escapes) is one more character outside the set.
    assert.equal(logflareKey('a\uD800'), '_a_');
  });

  it('gives again the name it gave (re-ingesting a stored name keeps its column)', () => {
    for (const key of IDEMPOTENT) {
      const once = logflareKey(key);
      assert.equal(logflareKey(once), once, `${key} → ${once}`);
    }
  });

  it('cuts by characters of the renamed name, which are bytes: it is ASCII', () => {
    // 128 two-byte characters: 256 bytes in, 129 `_` out (one per character, one leading), cut.
    assert.equal(logflareKey('é'.repeat(128)), `_${'_'.repeat(128)}`);
    assert.equal(logflareKey(`${'é'.repeat(126)}`), '_'.repeat(127));
    // A cut name is 129 long, so renaming it again cuts it again (upstream's idempotence test has
    // no long key; this is what its rule does with one).
    assert.equal(logflareKey(`_${a(128)}`), `__${a(127)}`);
    // INGEST_MAX_KEY_LENGTH moves the cut.
    assert.equal(logflareKey(a(11), 10), `_${a(10)}`);
  });

  it("covers every key of the one-step examples, and agrees where that step is the key's only one", () => {
    for (const [input, step, stepResult, whole, max = 128] of STEPS) {
      assert.equal(logflareKey(input, max), whole, `${JSON.stringify(input)} (${step})`);
      assert.equal(whole === stepResult, onlyThisStep(input, step, max), `${JSON.stringify(input)}: only ${step} applies, so the names must agree`);
    }
  });
});

describe("Logflare's rule on whole events", () => {
  it('renames at every depth, inside lists of objects too (the examples’ nested batches)', () => {
    assert.deepEqual(sanitiseObject({ metadata: { level1: { level2: { 'status-code': 200 } } } }), {
      metadata: { level1: { level2: { _status_code: 200 } } },
    });
    assert.deepEqual(sanitiseObject({ metadata: { '1level_key': [{ '2level_key': { '3level_key ,.~': 'value' } }] } }), {
      metadata: { _1level_key: [{ _2level_key: { __3level_key____: 'value' } }] },
    });
    assert.deepEqual(sanitiseObject({ metadata: { _PARTITION_1level_key: [{ _FILE_2level_key_PARTITION_: { '3level_key': 'value' } }] } }), {
      metadata: { __PARTITION_1level_key: [{ __FILE_2level_key_PARTITION_: { _3level_key: 'value' } }] },
    });
  });

  it('keeps both values where Logflare keeps one: `a!b` and `a?b` (its collision example)', () => {
    // Logflare's map keeps the last of two keys that end up equal; Quarry numbers the later ones.
    assert.deepEqual(sanitiseObject({ 'a!b': 1, 'a?b': 2 }), { _a_b: 1, _a_b_2: 2 });
  });

  it('stores an empty key as `_` (no engine has a column without a name)', () => {
    assert.equal(sanitiseKey(''), '_');
    assert.deepEqual(sanitiseObject({ '': 'v' }), { _: 'v' });
    assert.equal(safeKey(''), false);
  });

  it('leaves the names Supabase Studio reads alone: Vector sends them clean already', () => {
    const vector = { metadata: { request: { cf_ray: 'r', headers: { x_forwarded_for: 'y', user_agent: 'z' } }, response: { status_code: 200 } } };
    assert.equal(sanitiseObject(vector), vector, 'nothing to rename, so not even copied');
    assert.equal(sanitiseObject(vector, undefined, undefined, 'legacy'), vector);
  });

  it('renames OTLP attribute keys as any key: flat, `service.name` → `_service_name`', () => {
    // Logflare keeps each attribute map flat under its dotted keys (Logs.Otel.handle_attributes) and
    // its ingest renames them with every other key (LogEvent.make → :clean_to_bigquery_column_spec).
    const request = decodeLogsJson(
      JSON.stringify({
        resourceLogs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
            scopeLogs: [
              {
                scope: { name: 'lib', attributes: [{ key: 'telemetry.sdk-version', value: { stringValue: '1' } }] },
                logRecords: [
                  {
                    timeUnixNano: '1763719200000000000',
                    body: { kvlistValue: { values: [{ key: 'http.status_code', value: { intValue: '200' } }] } },
                    attributes: [
                      { key: 'http.request.method', value: { stringValue: 'GET' } },
                      { key: 'order_id', value: { intValue: '42' } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const [event] = logEvents(request, 0n).events;
    assert.ok(event);
    const fields = eventFields(event);
    assert.deepEqual(fields.resource, { _service_name: 'checkout' });
    assert.deepEqual(fields.attributes, { _http_request_method: 'GET', order_id: 42 });
    assert.deepEqual(fields.scope, { name: 'lib', version: '', attributes: { __telemetry_sdk_version: '1' } });
    assert.deepEqual(fields.body, { _http_status_code: 200 });
    assert.deepEqual(eventFields(event, undefined, 'legacy').resource, { service_name: 'checkout' });
  });

  it('is the default; a legacy source keeps the names it always got', () => {
    const event = { metadata: { 'cf-ray': 'r', 'x.y': 1, '2xx': 2, _TABLE_x: 3 } };
    assert.deepEqual(normaliseEvent(event, 0n).fields, { metadata: { _cf_ray: 'r', _x_y: 1, _2xx: 2, __TABLE_x: 3 } });
    assert.deepEqual(normaliseEvent(event, 0n, undefined, 'legacy').fields, { metadata: { cf_ray: 'r', x_y: 1, _2xx: 2, _TABLE_x: 3 } });
  });
});

describe('the legacy rule (sources created before Logflare’s rule)', () => {
  it('gives the names it gave before', () => {
    const cases: readonly (readonly [string, string])[] = [
      ['cf-ray', 'cf_ray'],
      ['x.y', 'x_y'],
      ['2xx', '_2xx'],
      ['', '_'],
      ['_TABLE_x', '_TABLE_x'],
      ['é', '_'],
      [a(129), a(128)],
    ];
    for (const [input, expected] of cases) {
      assert.equal(legacyKey(input), expected, input);
      assert.equal(sanitiseKey(input, 128, 'legacy'), expected, input);
    }
    assert.equal(safeKey('_TABLE_x', 128, 'legacy'), true);
    assert.equal(safeKey('_TABLE_x', 128, 'logflare'), false);
  });
});
