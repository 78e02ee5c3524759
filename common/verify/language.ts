// Whether an answer is written in a given language, for a skill rule such as "Answer in French"
// (docs/guide.md, "Your own skill"). Small and honest rather than clever: languages written in Latin or
// Cyrillic letters are told apart by their most frequent function words ("le", "der", "el", "и"),
// each word counted against every language that uses it in equal shares, and by the few letters only
// one of them uses (ñ, ß); Chinese, Japanese and Korean
// by their scripts. An answer under MIN_WORDS words is too short to tell and fails.
import { z } from 'zod';

export const LANGUAGES = {
  en: 'English',
  fr: 'French',
  de: 'German',
  es: 'Spanish',
  it: 'Italian',
  pt: 'Portuguese',
  nl: 'Dutch',
  ru: 'Russian',
  zh: 'Chinese',
  ja: 'Japanese',
  ko: 'Korean',
} as const;
export type Language = keyof typeof LANGUAGES;
export const LanguageCode = z.enum(Object.keys(LANGUAGES) as [Language, ...Language[]]);

export interface LanguageExpect {
  kind: 'language';
  language: Language;
}

export const LanguageExpectSchema = z.strictObject({ kind: z.literal('language'), language: LanguageCode });

/** Fewer words than this and no language is claimed. */
export const MIN_WORDS = 3;
/** The language's function words must make up at least this share of the answer's words. */
const MIN_SHARE = 0.12;

// The most frequent function words of each language (articles, pronouns, prepositions, conjunctions,
// common verbs), as written after lower-casing; elided forms split at the apostrophe ("c'est" → c, est).
const FUNCTION_WORDS: Record<Exclude<Language, 'zh' | 'ja' | 'ko'>, string> = {
  en: 'the a an and or but of to in on at for with from by as is are was were be been being it its this that these those you your i me my we our they them their he she his her not no have has had do does did will would can could should there here what which who when how if than then also please thank yes',
  fr: 'le la les l un une des du de d et est sont être été avoir a à au aux en dans pour par sur avec ne n pas que qu qui ce c cette ces il elle ils elles nous vous je j tu on se s son sa ses leur leurs mon ma mes votre vos notre nos mais ou où plus très bien oui non merci aussi comme tout tous y fait peut voici voilà bonjour aujourd comment',
  de: 'der die das den dem des ein eine einen einem einer eines und ist sind war waren nicht mit von zu zum zur auf für im ins am an es ich du sie wir ihr er sich auch aber oder wie was wenn dass bei nach noch nur kann können haben hat hatte wird werden bitte danke ja nein kein keine mein meine ihre sein seine unser aus um über',
  es: 'el la los las un una unos unas y o de del al en es son está están estoy ser fue que qué con por para no sí se su sus lo le les me mi mis tu usted ustedes yo nosotros pero como más muy gracias este esta estos estas hay puede también cuando donde porque ya hasta hola cómo hoy mucho bien aquí todo tiene',
  it: 'il lo la l i gli le un uno una e è di del della dei delle dello degli da dal dalla in nel nella nei con per su sul sulla che non si sono sei ha hanno ho come ma anche più questo questa questi quello mi ti ci vi suo sua suoi grazie molto perché quando io tu lei lui noi voi essere stato',
  pt: 'o a os as um uma uns umas e é de do da dos das em no na nos nas com por para que não se seu sua seus suas são está estão estou mais muito como mas também eu você vocês ele ela eles elas obrigado obrigada isso isto este esta ao aos pelo pela há foi ser ter tem',
  nl: 'de het een en is zijn was waren van in op met voor aan te dat die dit deze niet ook maar of om er je jij u uw ik we wij zij ze hij naar bij als wat hoe dank ja nee kan wordt worden heeft hebben geen nog al mijn onze door uit',
  ru: 'и в во не на я что он она оно они с со это как а по но к у мы вы ты из за от о об так его её ее их для да нет же бы был была было были все всё только еще ещё уже мне меня тебя вас нас вам нам есть будет может чем чтобы если когда или тоже там тут вот где ли ни до при через после перед сейчас пожалуйста спасибо',
};

const WORDS_BY_LANGUAGE = new Map(
  Object.entries(FUNCTION_WORDS).map(([lang, words]) => [lang as Language, new Set(words.split(' '))]),
);

/** For each word, the languages whose function words hold it. */
const OWNERS = new Map<string, Language[]>();
for (const [lang, words] of WORDS_BY_LANGUAGE) for (const w of words) OWNERS.set(w, [...(OWNERS.get(w) ?? []), lang]);

/** Letters one language uses and the others here do not (ñ, ß, ã, œ), each counted as a function word. */
const MARKS: [RegExp, Language][] = [
  [/[ñ¿¡]/gu, 'es'],
  [/[ßäöü]/gu, 'de'],
  [/[ãõ]/gu, 'pt'],
  [/[œêîûù]/gu, 'fr'],
  [/[ìò]/gu, 'it'],
];

const LETTER = /\p{L}/gu;
const HAN = /\p{Script=Han}/gu;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const HANGUL = /\p{Script=Hangul}/gu;
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

export interface LanguageGuess {
  /** The language the answer reads as, or null: too short, or no language stands out. */
  language: Language | null;
  /** Words counted (letters for the CJK scripts). */
  words: number;
  /** The share of the words each language's function words make up (CJK: its script's share of letters). */
  shares: Partial<Record<Language, number>>;
}

/** The language an answer reads as, with the shares it was decided from. */
export function guessLanguage(text: string): LanguageGuess {
  const letters = count(text, LETTER);
  if (letters > 0) {
    const han = count(text, HAN);
    const kana = count(text, KANA);
    const hangul = count(text, HANGUL);
    const cjk: [Language, number][] = [
      ['ja', kana > 0 ? (han + kana) / letters : 0],
      ['zh', kana === 0 ? han / letters : 0],
      ['ko', hangul / letters],
    ];
    const [lang, share] = cjk.reduce((a, b) => (b[1] > a[1] ? b : a));
    if (share >= 0.5)
      return { language: letters >= MIN_WORDS ? lang : null, words: letters, shares: Object.fromEntries(cjk) };
  }
  const words = (text.toLowerCase().match(/[\p{L}\p{M}]+/gu) ?? []).map((w) => w.normalize('NFC'));
  const score = new Map<Language, number>();
  for (const w of words) {
    const owners = OWNERS.get(w);
    if (owners) for (const lang of owners) score.set(lang, (score.get(lang) ?? 0) + 1 / owners.length);
  }
  const lower = text.toLowerCase();
  for (const [re, lang] of MARKS) {
    const n = count(lower, re);
    if (n > 0) score.set(lang, (score.get(lang) ?? 0) + n);
  }
  const shares: Partial<Record<Language, number>> = {};
  for (const [lang, s] of score) shares[lang] = s / Math.max(words.length, 1);
  const ranked = [...score].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  const clear =
    best !== undefined &&
    words.length >= MIN_WORDS &&
    best[1] / words.length >= MIN_SHARE &&
    (second === undefined || best[1] > second[1]);
  return { language: clear ? best[0] : null, words: words.length, shares };
}

/** Whether the answer reads as `language`; the reason when it does not. */
export function checkLanguage(e: LanguageExpect, answer: string): { passed: boolean; reason: string | null } {
  const g = guessLanguage(answer);
  if (g.language === e.language) return { passed: true, reason: null };
  const want = LANGUAGES[e.language];
  if (g.words < MIN_WORDS) return { passed: false, reason: `too short to tell whether it is ${want}` };
  return {
    passed: false,
    reason: g.language ? `it reads as ${LANGUAGES[g.language]}, not ${want}` : `it does not read as ${want}`,
  };
}
