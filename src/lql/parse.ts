/**
 * LQL text → typed rules: parses with the grammar, then gives each raw clause its meaning.
 */
import { QuarryError } from '../errors.ts';
import {
  type ChartAggregate,
  type ChartPeriod,
  type ChartRule,
  type FilterRule,
  type FilterValue,
  type FromRule,
  LEVELS,
  type LqlRules,
  MAX_CLAUSES,
  type SelectRule,
} from './rules.ts';
import { type ClauseSource, clauseError, parseSyntax, type RawClause, type RawFieldValue, type RawRangeEnd } from './syntax.ts';
import { timestampMeaning } from './timestamps.ts';

export interface ParseOptions {
  /** The clock for `now`, `today`, `last@…` (default: the current time). */
  now?: Date;
}

const aggregates: readonly ChartAggregate[] = ['count', 'countd', 'avg', 'sum', 'max', 'p50', 'p95', 'p99'];

const periods: Record<string, ChartPeriod> = {
  second: 'second',
  s: 'second',
  minute: 'minute',
  m: 'minute',
  hour: 'hour',
  h: 'hour',
  day: 'day',
  d: 'day',
};

/** Parses LQL into rules. Throws QuarryError PARSE_ERROR naming the clause, line and column. */
export function parseLql(lql: string, options: ParseOptions = {}): LqlRules {
  const now = options.now ?? new Date();
  const clauses = parseSyntax(lql);
  if (clauses.length > MAX_CLAUSES) {
    throw new QuarryError(
      'PARSE_ERROR',
      `LQL query has ${clauses.length} clauses; at most ${MAX_CLAUSES} are allowed (clause ${MAX_CLAUSES + 1} is \`${clauses[MAX_CLAUSES]?.text}\` at line ${clauses[MAX_CLAUSES]?.line}, column ${clauses[MAX_CLAUSES]?.column})`,
    );
  }
  const rules: LqlRules = { filters: [], selects: [] };
  const froms: FromRule[] = [];
  const chart: Partial<ChartRule> & { sources: ClauseSource[] } = { sources: [] };

  for (const clause of clauses) {
    const source: ClauseSource = { text: clause.text, line: clause.line, column: clause.column };
    if (clause.negate && clause.kind !== 'field' && clause.kind !== 'timestamp' && clause.kind !== 'message') {
      throw clauseError(source, 'A leading - (negation) applies only to filters');
    }
    switch (clause.kind) {
      case 'from':
        if (clause.table === null) {
          throw clauseError(source, `Error while parsing from clause: expected a table name of letters, digits and _, got '${clause.invalid ?? ''}'`);
        }
        froms.push({ table: clause.table, source });
        break;
      case 'select':
        if (clause.wildcard) break;
        if (clause.path === null) {
          throw clauseError(source, `Error while parsing select clause: expected a field path, got '${clause.invalid ?? ''}'`);
        }
        if (clause.alias === '') {
          throw clauseError(
            source,
            'Error while parsing select clause: select alias cannot be blank, expected alias name after @. For example, s:my_field@my_alias',
          );
        }
        rules.selects.push(selectRule(clause.path, clause.alias, source));
        break;
      case 'chart_group_by': {
        const period = periods[clause.period];
        if (!period) {
          throw clauseError(source, `Error while parsing chart clause: unknown period '${clause.period}', expected second, minute, hour or day`);
        }
        if (chart.period !== undefined) throw clauseError(source, 'Only one chart group_by can be used in a LQL query');
        chart.period = period;
        chart.sources.push(source);
        break;
      }
      case 'chart_aggregate': {
        const aggregate = aggregates.find((a) => a === clause.aggregate);
        if (!aggregate) {
          throw clauseError(source, `Error while parsing chart clause: unknown aggregate '${clause.aggregate}', expected one of ${aggregates.join(', ')}`);
        }
        if (chart.aggregate !== undefined || chart.path !== undefined) throw clauseError(source, 'Only one chart rule can be used in a LQL query');
        chart.aggregate = aggregate;
        chart.path = clause.path === '*' ? 'timestamp' : fieldPath(clause.path);
        chart.sources.push(source);
        break;
      }
      case 'chart_path':
        if (chart.aggregate !== undefined || chart.path !== undefined) throw clauseError(source, 'Only one chart rule can be used in a LQL query');
        chart.path = fieldPath(clause.path);
        chart.sources.push(source);
        break;
      case 'chart_invalid':
        throw clauseError(source, `Error while parsing chart clause: expected c:<aggregate>(<field>) or c:group_by(t::<period>), got '${clause.invalid}'`);
      case 'timestamp':
        rules.filters.push(timestampRule(clause, now, source));
        break;
      case 'field':
        rules.filters.push(fieldRule(clause, source));
        break;
      case 'message':
        rules.filters.push({
          path: 'event_message',
          operator: clause.operator === '~' ? '~' : 'string_contains',
          value: clause.value,
          negate: clause.negate,
          quoted: clause.quoted,
          source,
        });
        break;
    }
  }

  if (froms.length > 1) {
    throw new QuarryError(
      'PARSE_ERROR',
      `Only one from rule (f:table) is allowed per query, found ${froms.length}: ${froms.map((f) => `\`${f.source.text}\` at column ${f.source.column}`).join(', ')}`,
    );
  }
  if (froms[0]) rules.from = froms[0];
  const [first] = chart.sources;
  if (first) {
    rules.chart = { aggregate: chart.aggregate ?? 'count', path: chart.path ?? 'timestamp', period: chart.period ?? 'minute', source: first };
  }
  return rules;
}

/** `m.x` / `metadata.x` → `metadata.x`. As in Logflare, `m.` needs two characters after it. */
export function fieldPath(path: string): string {
  if (path.startsWith('m.') && path.length >= 4) return `metadata.${path.slice(2)}`;
  return path;
}

function selectRule(path: string, alias: string | null, source: ClauseSource): SelectRule {
  const rule: SelectRule = { path: fieldPath(path), source };
  if (alias !== null) rule.alias = alias;
  return rule;
}

function timestampRule(clause: Extract<RawClause, { kind: 'timestamp' }>, now: Date, source: ClauseSource): FilterRule {
  const meaning = timestampMeaning(clause.value, clause.operator, now, source);
  const base = { path: 'timestamp', negate: clause.negate, quoted: false, source };
  if (meaning.kind === 'range') return { ...base, operator: 'range', from: meaning.from, to: meaning.to };
  return { ...base, operator: clause.operator === '' ? '=' : clause.operator, value: meaning.value };
}

function fieldRule(clause: Extract<RawClause, { kind: 'field' }>, source: ClauseSource): FilterRule {
  const path = fieldPath(clause.path);
  const raw = clause.value;
  const base = { path, negate: clause.negate, quoted: raw.type === 'quoted', source };
  const invalid = (text: string): QuarryError => clauseError(source, `Error while parsing \`${path}\` field metadata filter value: ${text}`);

  if (raw.type === 'invalid') throw invalid(raw.text);
  switch (clause.operator) {
    case '~':
    case '@>~': {
      if (raw.type !== 'quoted' && raw.type !== 'regex') throw invalid(rawText(raw));
      return { ...base, operator: clause.operator === '~' ? '~' : 'list_includes_regexp', value: raw.value };
    }
    case '@>':
      if (raw.type === 'range' || raw.type === 'regex') throw invalid(rawText(raw));
      return { ...base, operator: 'list_includes', value: scalarValue(raw) };
    default: {
      const operator = clause.operator === '' ? '=' : clause.operator;
      if (raw.type === 'regex') throw invalid(raw.value);
      if (raw.type !== 'range') return { ...base, operator, value: scalarValue(raw) };
      if (operator !== '=') throw invalid(rawText(raw));
      if (raw.from.type === 'word' || raw.to.type === 'word') return levelRange(raw.from, raw.to, base, invalid);
      return { ...base, operator: 'range', from: scalarValue(raw.from), to: scalarValue(raw.to) };
    }
  }
}

function levelRange(
  from: RawRangeEnd,
  to: RawRangeEnd,
  base: { path: string; negate: boolean; quoted: boolean; source: ClauseSource },
  invalid: (text: string) => QuarryError,
): FilterRule {
  const text = `${rawText(from)}..${rawText(to)}`;
  if (from.type !== 'word' || to.type !== 'word') throw invalid(text);
  const lo = LEVELS.indexOf(from.value as (typeof LEVELS)[number]);
  const hi = LEVELS.indexOf(to.value as (typeof LEVELS)[number]);
  if (lo < 0 || hi < 0) throw invalid(`${text} (word ranges are log levels: ${LEVELS.join(', ')})`);
  const values: FilterValue[] = LEVELS.slice(Math.min(lo, hi), Math.max(lo, hi) + 1).map((value) => ({ type: 'string', value }));
  return { ...base, operator: 'in', values };
}

/**
 * Schema-less casting, as Logflare's: unquoted `true`/`false` are booleans and unquoted numbers
 * are numbers; quoted values, words, dates and datetimes stay strings.
 */
function scalarValue(raw: Exclude<RawFieldValue, { type: 'range' | 'invalid' | 'regex' }>): FilterValue {
  switch (raw.type) {
    case 'null':
      return { type: 'null' };
    case 'bool':
      return { type: 'bool', value: raw.value };
    case 'number':
      return { type: 'number', text: raw.text, integer: !raw.text.includes('.') };
    case 'quoted':
    case 'word':
      return { type: 'string', value: raw.value };
    case 'date':
    case 'datetime':
      return { type: 'string', value: raw.text };
  }
}

function rawText(raw: RawFieldValue): string {
  switch (raw.type) {
    case 'null':
      return 'NULL';
    case 'bool':
      return String(raw.value);
    case 'quoted':
      return `"${raw.value}"`;
    case 'word':
    case 'regex':
      return raw.value;
    case 'range':
      return `${rawText(raw.from)}..${rawText(raw.to)}`;
    default:
      return raw.text;
  }
}
