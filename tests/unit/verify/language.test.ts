// The language checker (common/verify/language.ts) on real sentences: each language is told from the
// others that share its function words, short and mixed answers are not claimed, and the checker as a
// verifier test can fail (so a suggested "Answer in French" marks columns ✓ and ✗).
import { describe, expect, it } from 'vitest';
import { ExpectSchema, checkExpect } from '../../../common/verify/expect';
import { describeExpect } from '../../../common/verify/describe';
import { guessLanguage, type Language } from '../../../common/verify/language';
import { passesAnything } from '../../../common/verify/meaningful';

const SENTENCES: Record<Language, string[]> = {
  en: [
    'The report is ready and I will send it to you tomorrow morning.',
    'Please restart the server before you run the tests again.',
    'Your order has been shipped and should arrive within three days.',
  ],
  fr: [
    "Le rapport est prêt et je vous l'enverrai demain matin.",
    'Merci de redémarrer le serveur avant de relancer les tests.',
    "C'est une bonne idée, mais il faut d'abord vérifier les chiffres.",
  ],
  de: [
    'Der Bericht ist fertig und ich schicke ihn dir morgen früh.',
    'Bitte starte den Server neu, bevor du die Tests noch einmal ausführst.',
    'Das ist eine gute Idee, aber wir müssen zuerst die Zahlen prüfen.',
  ],
  es: [
    'El informe está listo y te lo enviaré mañana por la mañana.',
    'Por favor, reinicia el servidor antes de volver a ejecutar las pruebas.',
    'Es una buena idea, pero primero hay que revisar los números.',
  ],
  it: [
    'Il rapporto è pronto e te lo invierò domani mattina.',
    'Per favore, riavvia il server prima di eseguire di nuovo i test.',
    "È una buona idea, ma prima dobbiamo controllare i numeri dell'anno.",
  ],
  pt: [
    'O relatório está pronto e eu vou enviá-lo para você amanhã de manhã.',
    'Por favor, reinicie o servidor antes de executar os testes novamente.',
    'É uma boa ideia, mas primeiro temos que verificar os números.',
  ],
  nl: [
    'Het rapport is klaar en ik stuur het je morgenochtend.',
    'Start de server opnieuw voordat je de tests nog een keer uitvoert.',
    'Dat is een goed idee, maar we moeten eerst de cijfers controleren.',
  ],
  ru: [
    'Отчёт готов, и я отправлю его вам завтра утром.',
    'Пожалуйста, перезапустите сервер, прежде чем снова запускать тесты.',
    'Это хорошая идея, но сначала нужно проверить цифры.',
  ],
  zh: ['报告已经准备好了，我明天早上发给你。', '请在再次运行测试之前重新启动服务器。'],
  ja: [
    '報告書の準備ができたので、明日の朝に送ります。',
    'テストをもう一度実行する前に、サーバーを再起動してください。',
  ],
  ko: ['보고서가 준비되었으니 내일 아침에 보내 드리겠습니다.', '테스트를 다시 실행하기 전에 서버를 다시 시작하세요.'],
};

describe('guessLanguage', () => {
  for (const [language, sentences] of Object.entries(SENTENCES))
    it.each(sentences)(`reads as ${language}: %s`, (s) => {
      expect(guessLanguage(s).language).toBe(language);
    });

  it('claims no language for an answer too short to tell, or with no function words', () => {
    expect(guessLanguage('Oui.').language).toBeNull();
    expect(guessLanguage('').language).toBeNull();
    expect(guessLanguage('VESSOR: 1057 4412').language).toBeNull();
    expect(guessLanguage('brikmux pexsur glistam puxgu').language).toBeNull();
  });

  it('an English answer with one French word stays English; a French one with an English name stays French', () => {
    expect(guessLanguage('The café on the corner is closed on Mondays.').language).toBe('en');
    expect(guessLanguage('Le serveur GitHub Actions est en panne depuis ce matin.').language).toBe('fr');
  });
});

describe('a language test', () => {
  const french = { kind: 'language' as const, language: 'fr' as const };

  it('passes an answer in the language and fails the others, saying why', () => {
    expect(checkExpect(french, SENTENCES.fr[0]!)).toEqual({ passed: true, reason: null });
    expect(checkExpect(french, SENTENCES.en[0]!)).toEqual({ passed: false, reason: 'it reads as English, not French' });
    expect(checkExpect(french, 'Oui.')).toEqual({ passed: false, reason: 'too short to tell whether it is French' });
    expect(checkExpect(french, 'zorblax quibbit frandle').reason).toBe('it does not read as French');
  });

  it('can fail, reads as a rule, and is checked at the API boundary', () => {
    expect(passesAnything(french)).toBeNull();
    expect(passesAnything({ kind: 'language', language: 'en' })).toBeNull();
    expect(describeExpect(french)).toBe('is written in French');
    expect(ExpectSchema.safeParse(french).success).toBe(true);
    expect(ExpectSchema.safeParse({ kind: 'language', language: 'klingon' }).success).toBe(false);
    expect(ExpectSchema.safeParse({ kind: 'language', language: 'fr', extra: 1 }).success).toBe(false);
  });
});
