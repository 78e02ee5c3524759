// A bundle folder passes the read gate (read-gate.ts) before the engine opens anything in it:
// bundle.json is read through the gate, and every file it lists is checked there too (a regular file,
// symlinks resolved and re-checked, within its kind's limit; a FIFO or device never opened), so the
// engine's own reads (tokenizer JSON, ONNX graphs, external data, the sha256 pass) only ever meet
// regular files of a sane size. docs/security.md "Files a user points us at".
import { extname, join } from 'node:path';
import { MANIFEST_FILE, parseManifest, type BundleManifest } from '../engine/manifest';
import { checkFile, GateError, readGatedText, type ReadKind } from '../files/read-gate';

/** What a file listed in bundle.json is, for its size limit. */
export function bundleFileKind(file: string): ReadKind {
  return extname(file).toLowerCase() === '.json' ? 'bundle JSON file' : 'bundle graph or weights file';
}

/** bundle.json's bytes through the gate, parsed. Throws a GateError or the manifest's own error. */
export async function readBundleManifest(dir: string): Promise<{ text: string; manifest: BundleManifest }> {
  const file = join(dir, MANIFEST_FILE);
  const text = await readGatedText(file, 'bundle.json');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new GateError(file, `not valid JSON (${(err as Error).message})`);
  }
  return { text, manifest: parseManifest(raw, file) };
}

/** Every file of the bundle at `dir` through the gate; the manifest, for callers that want it. */
export async function gateBundleFolder(dir: string): Promise<BundleManifest> {
  const { manifest } = await readBundleManifest(dir);
  for (const file of Object.keys(manifest.files)) await checkFile(join(dir, file), bundleFileKind(file));
  return manifest;
}
