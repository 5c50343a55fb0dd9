/**
 * The sqlparser-rs WASM module, owned here rather than through the package's wrapper so that a
 * crashed instance can be replaced. A query that makes the Rust code overflow its stack (a chain of
 * ~800 operators is enough) leaves that WASM instance's memory corrupt: every later parse would fail
 * until a restart. So on a WebAssembly RuntimeError the instance is dropped, a spare loaded in
 * advance takes over at once, and a new spare is loaded in the background.
 *
 * The module is compiled, and an instance initialised, on the first parse rather than at start-up:
 * compiling the 3.5 MB of WebAssembly costs about 11 MiB of memory and 10–15 ms, which a service
 * that only ingests never needs (docs/PERFORMANCE.md, "Footprint, second pass").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { QuarryError } from '../errors.ts';

// @types/node 20 has no WebAssembly typings; these are the two members used here.
declare global {
  namespace WebAssembly {
    class Module {
      constructor(bytes: Uint8Array);
    }
    class RuntimeError extends Error {}
  }
}

interface Glue {
  initSync(options: { module: WebAssembly.Module }): unknown;
  parse_sql(dialect: string, sql: string): unknown;
}

const require = createRequire(import.meta.url);
const glueUrl = pathToFileURL(path.join(path.dirname(require.resolve('@guanmingchiu/sqlparser-ts')), '..', 'wasm', 'sqlparser_rs_wasm.js')).href;
// Out-of-bounds memory accesses are checked by compiled code rather than caught as SIGSEGV by
// V8's trap handler: embedded chDB (CLICKHOUSE_URL=chdb:) installs ClickHouse's own fatal-signal
// handlers over V8's, and the trap a crashing parse raises would then freeze the process for
// minutes and kill it instead of becoming the RuntimeError handled below. Must precede compiling.
v8.setFlagsFromString('--wasm-enforce-bounds-checks');
let wasmModule: WebAssembly.Module | undefined;
/** The compiled module, shared by every instance; compiled when first needed. */
function compiled(): WebAssembly.Module {
  wasmModule ??= new WebAssembly.Module(readFileSync(new URL('sqlparser_rs_wasm_bg.wasm', glueUrl)));
  return wasmModule;
}

/** A glue module, imported ahead, and whether its instance has been initialised. */
interface Instance {
  glue: Glue;
  initialised: boolean;
}

let loaded = 0;
/** A fresh instance: the glue module keeps its instance in module state, so each gets its own copy. */
async function instantiate(): Promise<Instance> {
  return { glue: (await import(`${glueUrl}?instance=${loaded++}`)) as Glue, initialised: false };
}

/** The instance's glue, initialised first if this is its first parse (synchronous: about 1 ms). */
function ready(instance: Instance): Glue {
  if (!instance.initialised) {
    instance.glue.initSync({ module: compiled() });
    instance.initialised = true;
  }
  return instance.glue;
}

let current: Instance | undefined = await instantiate();
let spare: Instance | undefined = await instantiate();
let replenishing = false;

function replenish(): void {
  if (replenishing) return;
  replenishing = true;
  instantiate().then(
    (g) => {
      replenishing = false;
      if (current === undefined) current = g;
      else spare = g;
      if (spare === undefined) replenish();
    },
    () => {
      replenishing = false;
    },
  );
}

/** A parse error: what the parser said, e.g. `Expected: ..., found: x at Line: 1, Column: 5`. */
export class SqlSyntaxError extends Error {}

/** BigQuery-dialect SQL → sqlparser-rs statements (JSON). */
export function parseStatements(sql: string): unknown[] {
  const parser = current;
  if (parser === undefined) {
    throw new QuarryError('OVERLOADED', 'The SQL parser is restarting; retry in a moment.', { retryAfter: 1 });
  }
  try {
    return ready(parser).parse_sql('bigquery', sql) as unknown[];
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError || e instanceof RangeError) {
      current = spare;
      spare = undefined;
      replenish();
      throw new QuarryError('INVALID_QUERY', 'The query is too complex to parse (too many operators or levels of nesting).');
    }
    // The glue throws plain objects carrying a message.
    const message = typeof e === 'object' && e !== null && 'message' in e ? String(e.message) : String(e);
    throw new SqlSyntaxError(message);
  }
}
