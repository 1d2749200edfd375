/** Where the built server goes: a sibling of src/. */
export const DIST: string;
/** Packages loaded from node_modules as installed rather than bundled. */
export const UNBUNDLED: readonly string[];
/** Whether dist/ was built from the sources and packages as they are now. */
export function distIsCurrent(): boolean;
/** A package's file name under dist/vendor/. */
export function vendorFile(specifier: string): string;
/** Builds dist/ from src/ and the packages it imports. */
export function build(): Promise<void>;
/** Moves a build's files from `built` into `dist`: the previous build's files stay, older ones go. */
export function install(built: string, dist?: string): void;
