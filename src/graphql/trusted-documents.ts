import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, validate, type GraphQLSchema } from 'graphql';

/** The documents of every manifest, by hash, and the hash of each text (for texts sent whole). */
export interface TrustedDocuments {
  byHash: ReadonlyMap<string, string>;
  hashByText: ReadonlyMap<string, string>;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Reads every `*.json` manifest in `folder`: `{"<sha256 hex of the document>": "<document>"}`, as
 * GraphQL Code Generator's client preset writes it (`persistedDocuments`), optionally with the
 * `sha256:` prefix of the persisted-documents convention. Each document must be valid against the
 * schema and its key must be its hash, so a stale or hand-edited manifest stops the start, naming
 * the file and the key, rather than failing clients later.
 */
export function loadTrustedDocuments(folder: string, schema: GraphQLSchema): TrustedDocuments {
  let files: string[];
  try {
    files = readdirSync(folder).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    throw new Error(`[graphql] trusted_documents_path ${folder}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (error as Error).message}`);
  }
  const byHash = new Map<string, string>();
  const hashByText = new Map<string, string>();
  for (const file of files) {
    const path = join(folder, file);
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(`${path}: not a JSON manifest: ${(error as Error).message}`);
    }
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw new Error(`${path}: expected an object of "<sha256 hash>": "<document>"`);
    for (const [key, text] of Object.entries(manifest)) {
      const hash = normalizeHash(key);
      if (typeof text !== 'string') throw new Error(`${path}: ${key}: the document must be a string`);
      if (!SHA256_HEX.test(hash)) throw new Error(`${path}: ${key}: keys must be the document's SHA-256 in hex (client preset: persistedDocuments.hashAlgorithm 'sha256')`);
      if (sha256(text) !== hash) throw new Error(`${path}: ${key}: the key is not the SHA-256 of its document`);
      let errors;
      try {
        errors = validate(schema, parse(text));
      } catch (error) {
        throw new Error(`${path}: ${key}: ${(error as Error).message}`);
      }
      if (errors.length > 0) throw new Error(`${path}: ${key}: ${errors[0]!.message} (regenerate the manifest against this server's schema)`);
      byHash.set(hash, text);
      hashByText.set(text, hash);
    }
  }
  return { byHash, hashByText };
}

export function normalizeHash(key: string): string {
  return key.startsWith('sha256:') ? key.slice('sha256:'.length) : key;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
