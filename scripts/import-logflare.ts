/**
 * npm run import-logflare: copies the events of a Logflare PostgreSQL backend (self-hosted
 * Supabase: schema `_analytics` of database `_supabase`) into a running Quarry through its own
 * HTTP API, ids and timestamps kept. Interrupt it and run it again as often as needed: events
 * Quarry already has are never sent twice (src/import/importer.ts says how).
 *
 *   npm run import-logflare -- --from postgres://supabase_admin:PASSWORD@db:5432/_supabase
 *
 * `--help` lists the options (src/import/options.ts). Progress goes to stderr, the report to
 * stdout (`--json` for scripts). The command itself is src/import/command.ts.
 */
import { runCommand } from '../src/import/command.ts';

process.exitCode = await runCommand(process.argv.slice(2), process.env, {
  stdout: process.stdout,
  stderr: process.stderr,
  tty: process.stderr.isTTY === true,
  handleSignals: true,
});
