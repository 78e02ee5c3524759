import { collectImport } from './main/skills/importer';
for (const src of process.argv.slice(2)) {
  const t = Date.now();
  try {
    const r = await collectImport(src, { cacheDir: '/tmp/pskills-cache-try' });
    const reasons = new Map<string, number>();
    for (const s of r.skipped) { const k = s.reason.replace(/ of .*| \(.*|'.*|: \d+%.*| \d+ bytes.*/, ''); reasons.set(k, (reasons.get(k) ?? 0) + 1); }
    console.log(src, 'kept', r.versions.length, 'skipped', r.skipped.length, `${Date.now() - t}ms`, JSON.stringify([...reasons]));
    for (const s of r.skipped) if (/not English|invalid|licence/.test(s.reason)) console.log('   ', s.path, '::', s.reason.slice(0, 160));
  } catch (e) { console.log(src, 'FAILED', (e as Error).message); }
}
