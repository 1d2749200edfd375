/** Where the compiled server goes: a sibling of src/. */
export const DIST: string;
/** Whether dist/ was built from the sources as they are now. */
export function distIsCurrent(): boolean;
/** One module: types blanked, relative `.ts` specifiers made `.js`; throws on a specifier it cannot rewrite. */
export function compile(source: string, file: string): Promise<string>;
/** Compiles src/ into dist/. */
export function build(): Promise<void>;
