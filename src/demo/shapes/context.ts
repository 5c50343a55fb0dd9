/**
 * What every demo event builder receives, and the JSON value type events are made of.
 */
import type { Pools } from '../pools.ts';
import type { Rng } from '../random.ts';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type DemoEvent = { [key: string]: Json };

export interface EventContext {
  rng: Rng;
  pools: Pools;
  /** Event time, unix milliseconds. */
  ms: number;
  /** Extra microseconds (0–999) beyond `ms`. */
  micros: number;
  /** The same instant as ISO-8601 with microseconds and a `Z` offset, as Vector writes it. */
  iso: string;
  project: string;
}

export type EventBuilder = (ctx: EventContext) => DemoEvent;

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `15/Jan/2025:11:59:58 +0000`, the nginx access-log time format. */
export function nginxTime(iso: string): string {
  const month = months[Number(iso.slice(5, 7)) - 1];
  return `${iso.slice(8, 10)}/${month}/${iso.slice(0, 4)}:${iso.slice(11, 19)} +0000`;
}

/** `2025-01-15 11:59:58.123 UTC`, the Postgres log-line time format. */
export function postgresTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}

/** `2025-01-15T11:59:58Z`, second precision (GoTrue's `time`). */
export function secondsIso(iso: string): string {
  return `${iso.slice(0, 19)}Z`;
}

/** `2025-01-15T11:59:58.123Z`, millisecond precision. */
export function millisIso(iso: string): string {
  return `${iso.slice(0, 23)}Z`;
}

let httpDateSecond = -1;
let httpDateText = '';

/** `Thu, 19 Nov 2026 00:48:15 GMT`, the HTTP `Date` header (memoised per second). */
export function httpDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== httpDateSecond) {
    httpDateSecond = second;
    httpDateText = new Date(second * 1000).toUTCString();
  }
  return httpDateText;
}
