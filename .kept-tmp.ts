import { collectImport } from './main/skills/importer';
const r = await collectImport('ecc-universal@2.0.0', { cacheDir: '/tmp/pskills-cache-try' });
const paths = r.versions.map((v) => (v.provenance as { path: string }).path);
const dirs = new Map<string, number>();
for (const p of paths) { const k = p.split('/').slice(0, 2).join('/'); dirs.set(k, (dirs.get(k) ?? 0) + 1); }
console.log([...dirs]);
const sk = new Map<string, number>();
for (const s of r.skipped) { const k = s.path.split('/').slice(0, 2).join('/') + ' ' + s.reason.slice(0, 20); sk.set(k, (sk.get(k) ?? 0) + 1); }
console.log([...sk]);
