import { collectImport } from './main/skills/importer';
import { proseOf } from './main/skills/filters';
import { parseSkillMd } from './main/skills/parse';
const r = await collectImport('ecc-universal@2.0.0', { cacheDir: '/tmp/pskills-cache-try' });
for (const v of r.versions) {
  const p = (v.provenance as { path: string }).path;
  if (!p.startsWith('docs/ja-JP')) continue;
  const prose = proseOf(parseSkillMd(v.content).body);
  const letters = [...prose].filter((c) => /\p{L}/u.test(c));
  const nonLatin = letters.filter((c) => !/\p{Script=Latin}/u.test(c)).length;
  console.log(p, letters.length, (nonLatin / letters.length).toFixed(2), JSON.stringify(prose.replace(/\s+/g, ' ').slice(0, 140)));
}
