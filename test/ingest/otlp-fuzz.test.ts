/**
 * Fuzzing the OTLP logs decoders and mapping (src/ingest/otlp/logs.ts `readLogs`): thousands of
 * random requests, encoded by the library in protobuf and JSON, then mutated (truncated, bytes
 * flipped, inserted and deleted, tags given other wire types, lengths made huge, invalid UTF-8,
 * bodies spliced, values swapped for values of other types, nesting far past the bound) and
 * random bytes. Every body must either give events ingest can take (src/ingest/prepare.ts) or be
 * refused with a 400 or 413 and give none; nothing else may be thrown. Deterministic: the seed is
 * printed and can be set with OTLP_FUZZ_SEED. The HTTP side (no 500, bounded time, nothing stored
 * from a refused body) is test/http/otlp-fuzz.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuarryError } from '../../src/errors.ts';
import { type LogsIntake, readLogs } from '../../src/ingest/otlp/logs.ts';
import type { OtlpEncoding } from '../../src/ingest/otlp/response.ts';
import { prepareRequest } from '../../src/ingest/prepare.ts';
import { jsonText } from '../../src/storage/json-text.ts';
import { parseZonedTimestamp } from '../../src/time.ts';
import { fuzzBodies, seedFromEnv } from './otlp-fuzz-bodies.ts';

const RECEIVED = 1_763_719_200_000_000n;

function check(body: Uint8Array, encoding: OtlpEncoding, label: string): 'stored' | 'refused' {
  let intake: LogsIntake;
  try {
    intake = readLogs(body, encoding, RECEIVED);
  } catch (e) {
    if (e instanceof QuarryError && (e.status === 400 || e.status === 413)) {
      assert.ok(e.message.length > 0 && !/\n\s+at /.test(e.message), `${label}: a message without a stack`);
      return 'refused';
    }
    throw new Error(`${label}: ${encoding} body ${Buffer.from(body.subarray(0, 200)).toString('hex')} threw ${String(e)}`, { cause: e });
  }
  for (const event of intake.events) {
    assert.equal(typeof event.timestamp, 'string', label);
    assert.notEqual(parseZonedTimestamp(event.timestamp as string), undefined, `${label}: timestamp ${String(event.timestamp)}`);
    assert.match(event.trace_id as string, /^([0-9a-f]{32})?$/, label);
    assert.match(event.span_id as string, /^([0-9a-f]{16})?$/, label);
    assert.ok(Number.isInteger(event.severity_number), label);
    jsonText(event);
  }
  if (intake.partial !== undefined) assert.ok(intake.partial.rejected > 0 && intake.events.length > 0, label);
  // What ingest does with the events before storing them must take them too.
  prepareRequest(intake.events, RECEIVED);
  return 'stored';
}

describe('OTLP logs fuzzing', () => {
  it('no body throws anything but a 400 or 413, and every accepted one gives storable events', { timeout: 300_000 }, () => {
    const seed = seedFromEnv();
    const count = 2000 * Math.max(1, Number(process.env.OTLP_FUZZ_SCALE) || 1);
    const tally = { protobuf: { stored: 0, refused: 0 }, json: { stored: 0, refused: 0 } };
    for (const { body, encoding, label } of fuzzBodies(seed, count)) tally[encoding][check(body, encoding, `seed ${seed}, ${label}`)]++;
    console.log(`OTLP fuzz seed ${seed}: ${JSON.stringify(tally)}`);
    // The mutations reach both outcomes in both encodings, or the fuzzing tests little.
    for (const encoding of ['protobuf', 'json'] as const) {
      assert.ok(tally[encoding].stored > count / 20, `${encoding}: ${JSON.stringify(tally[encoding])}`);
      assert.ok(tally[encoding].refused > count / 20, `${encoding}: ${JSON.stringify(tally[encoding])}`);
    }
  });
});
