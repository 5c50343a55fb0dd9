import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyFormat, parseEvents } from '../../src/ingest/body.ts';
import { QuarryError } from '../../src/errors.ts';

function rejects(text: string, format: 'json' | 'ndjson', pattern: RegExp): void {
  assert.throws(
    () => parseEvents(text, format),
    (e: unknown) => e instanceof QuarryError && e.status === 400 && pattern.test(e.message),
  );
}

describe('parseEvents', () => {
  it('reads one object, an array, {batch} and NDJSON', () => {
    assert.deepEqual(parseEvents('{"a":1}', 'json'), [{ a: 1 }]);
    assert.deepEqual(parseEvents('[{"a":1},{"a":2}]', 'json'), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(parseEvents('{"batch":[{"a":1},{"a":2}]}', 'json'), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(parseEvents('{"a":1}\n\n{"a":2}\r\n', 'ndjson'), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(parseEvents('{"a":1}\n{"a":2}', 'json'), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(parseEvents('[]', 'json'), []);
  });

  it('treats an object with batch and other keys as one event', () => {
    assert.deepEqual(parseEvents('{"batch":[1],"x":1}', 'json'), [{ batch: [1], x: 1 }]);
  });

  it('names the event that is not an object, and why', () => {
    rejects('[{"a":1}, 5]', 'json', /index 1 is not a JSON object: got a number/);
    rejects('{"batch":[{"a":1},{"b":2},"x"]}', 'json', /batch event at index 2 .* a string \("x"\)/);
    rejects('{"batch":3}', 'json', /"batch" must be an array/);
    rejects('"hello"', 'json', /got a string/);
    rejects('{"a":', 'json', /not valid JSON/);
    rejects('', 'json', /empty/);
    rejects('{"a":1}\n[1]\n', 'ndjson', /Line 2 .* not an event object: got an array/);
    rejects('{"a":1}\n{oops}\n', 'ndjson', /Line 2 .* not valid JSON/);
  });

  it('tells NDJSON content types apart', () => {
    assert.equal(bodyFormat('application/x-ndjson'), 'ndjson');
    assert.equal(bodyFormat('application/x-ndjson; charset=utf-8'), 'ndjson');
    assert.equal(bodyFormat('application/json'), 'json');
    assert.equal(bodyFormat(undefined), 'json');
  });
});
