// Registry specs the importer accepts: name, name@version, name@range, name@tag (scoped or not).
// Git, URL and file specs are refused: those sources come in as folders or .tgz files.

export interface NpmSpec {
  name: string;
  range: string | null; // version, range or dist-tag; null means latest
  exactVersion: string | null; // set when range pins one version: the cache can answer it
}

const NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;
const RANGE = /^[A-Za-z0-9.+\-^~<>=|* ]+$/;
const EXACT = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** The parsed spec, or a message saying what is wrong with it. */
export function parseNpmSpec(spec: string): NpmSpec | string {
  const text = spec.trim();
  if (text === '') return 'the source is empty';
  if (/^[a-z+]+:/i.test(text))
    return `'${text}' is a URL or protocol spec; give a registry package name, a folder or a .tgz file`;
  const at = text.indexOf('@', text.startsWith('@') ? 1 : 0);
  const name = at < 0 ? text : text.slice(0, at);
  const range = at < 0 ? null : text.slice(at + 1).trim();
  if (!NAME.test(name) || name.length > 214)
    return `'${text}' is not a folder, a .tgz file or a valid npm package name`;
  if (range !== null && (range === '' || !RANGE.test(range)))
    return `'${range}' in '${text}' is not a version, range or tag`;
  return { name, range, exactVersion: range !== null && EXACT.test(range) ? range : null };
}

/** The file name npm pack gives a package's tarball: '@a/b' 1.0.0 → 'a-b-1.0.0.tgz'. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}
