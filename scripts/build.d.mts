/** Types of scripts/build.mjs (plain JavaScript: it runs before any TypeScript loader). */
/** The bundled service, dist/src/quarry.mjs (what `npm start` runs). */
export declare const serviceEntry: string;
/** Brings dist/ up to date with src/ (and test/, bench/, scripts/ with `tests`); returns how many files it wrote. */
export declare function build(options?: { tests?: boolean }): number;
