/** Every `.wat` file under src/, as its path. */
export function watFiles(): string[];
/** The TypeScript module that carries the assembled bytes of the text module at `wat`. */
export function wasmModuleSource(wat: string): Promise<string>;
/** Where the module assembled from `wat` is committed. */
export function wasmModulePath(wat: string): string;
