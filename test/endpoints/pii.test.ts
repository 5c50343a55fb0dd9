import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDACTED, redactRows, redactString, redactValue } from '../../src/endpoints/pii.ts';

describe('redactString', () => {
  const vectors: [string, string][] = [
    ['User connected from 192.168.1.1 and 10.0.0.1', 'User connected from REDACTED and REDACTED'],
    ['IPv6 address: 2001:0db8:85a3:0000:0000:8a2e:0370:7334', 'IPv6 address: REDACTED'],
    ['Compressed: 2001:db8::8a2e:370:7334', 'Compressed: REDACTED'],
    ['IPv4: 192.168.1.1, IPv6: 2001:db8::1', 'IPv4: REDACTED, IPv6: REDACTED'],
    ['IP: 192.168.1.1, not 12192.168.1.11', 'IP: REDACTED, not 12192.168.1.11'],
    ['Localhost: 127.0.0.1 and ::1', 'Localhost: REDACTED and REDACTED'],
    ['User 10.0.0.1 connected ::1', 'User REDACTED connected REDACTED'],
    ['link-local fe80::1 up', 'link-local REDACTED up'],
    ['scoped fe80::1%eth0', 'scoped REDACTED%eth0'],
    ['mapped ::ffff:1.2.3.4 here', 'mapped REDACTED here'],
    ['nat64 64:ff9b::192.0.2.33', 'nat64 REDACTED'],
    ['url http://10.1.2.3:8080/path', 'url http://REDACTED:8080/path'],
    ['bracketed [2001:db8::1]:443', 'bracketed [REDACTED]:443'],
    ['end of sentence 8.8.8.8.', 'end of sentence REDACTED.'],
    ['x-forwarded-for: 203.0.113.7,198.51.100.2', 'x-forwarded-for: REDACTED,REDACTED'],
    ['trailing comma 2001:db8::1, next', 'trailing comma REDACTED, next'],
    ['all ones 255.255.255.255', 'all ones REDACTED'],
  ];
  for (const [input, expected] of vectors) {
    it(`redacts ${JSON.stringify(input)}`, () => assert.equal(redactString(input), expected));
  }

  const untouched = [
    'version 1.2.3.4.5 released',
    'not an address 256.1.1.1',
    'time 2026-11-21T10:00:00.123Z',
    'clock 10:00:00',
    'rust path std::io::Error',
    'mac 00:1a:2b:3c:4d:5e',
    'ratio 3:2',
    'plain text without numbers',
    'number 12192.168.1.11',
    'uuid 0b6b7c2e-1f3a-4e5b-9c8d-7a6f5e4d3c2b',
  ];
  for (const input of untouched) {
    it(`leaves ${JSON.stringify(input)} alone`, () => assert.equal(redactString(input), input));
  }
});

describe('redactValue', () => {
  it('walks objects and arrays at any depth and leaves keys and non-strings untouched', () => {
    const row = {
      id: 'a',
      n: 192,
      ok: true,
      nothing: null,
      '10.0.0.1': 'key stays',
      metadata: [{ request: [{ headers: [{ x_real_ip: '172.16.0.9', cf_ray: '7a8b' }] }], ips: ['1.1.1.1', '::1', 5] }],
    };
    assert.deepEqual(redactValue(row), {
      id: 'a',
      n: 192,
      ok: true,
      nothing: null,
      '10.0.0.1': 'key stays',
      metadata: [{ request: [{ headers: [{ x_real_ip: REDACTED, cf_ray: '7a8b' }] }], ips: [REDACTED, REDACTED, 5] }],
    });
  });

  it('does not change its input', () => {
    const rows = [{ ip: '10.0.0.1' }];
    const out = redactRows(rows);
    assert.deepEqual(rows, [{ ip: '10.0.0.1' }]);
    assert.deepEqual(out, [{ ip: REDACTED }]);
  });
});
