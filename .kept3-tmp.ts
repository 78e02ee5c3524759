import { collectImport } from './main/skills/importer';
import { proseOf } from './main/skills/filters';
import { parseSkillMd } from './main/skills/parse';
import { readFileSync } from 'node:fs';
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
function shares(prose: string) {
  const tokens = prose.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{M}]+/gu) ?? [];
  const nonLatin = tokens.filter((t) => CJK.test(t) || !/\p{Script=Latin}/u.test(t)).length;
  return { n: tokens.length, nonLatin: nonLatin / Math.max(1, tokens.length) };
}
const all: [string, number, number][] = [];
for (const pkg of process.argv.slice(2)) {
  const r = await collectImport(pkg, { cacheDir: '/tmp/pskills-cache-try' });
  for (const v of r.versions) { const s = shares(proseOf(parseSkillMd(v.content).body)); all.push([`KEPT ${pkg} ${(v.provenance as any).path}`, s.n, s.nonLatin]); }
}
all.sort((a, b) => b[2] - a[2]);
console.log(all.slice(0, 15).map((x) => `${x[2].toFixed(3)} ${x[1]} ${x[0]}`).join('\n'));
