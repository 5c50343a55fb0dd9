/** Types of scripts/build.mjs (plain JavaScript: it runs before any TypeScript loader). */
/** The compiled service's entry point, dist/src/main.js. */
export declare const serviceEntry: string;
/** Brings dist/ up to date with src/ (and test/, bench/, scripts/ with `tests`); returns how many files it wrote. */
export declare function build(options?: { tests?: boolean }): number;
