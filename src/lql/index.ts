/** LQL, the Logflare Query Language: `lql` on sandboxed endpoints. See docs/LQL.md. */
export { type CompileContext, type CompiledLql, compileLql, compileRules, LQL_PARAM_PREFIX } from './compile.ts';
export { type ParseOptions, parseLql } from './parse.ts';
export type * from './rules.ts';
