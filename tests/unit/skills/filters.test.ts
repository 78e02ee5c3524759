import { describe, expect, it } from 'vitest';
import { detectNonEnglish, licenseForbidsReuse, proseOf } from '../../../main/skills/filters';
import { ENGLISH_BODY } from '../../fixtures/skills/skill-md';

// Prose written for these tests: a skill body in each language, with the code and links that real
// skills carry, so the filter must look past them.
const CODE = '\n```ts\nconst result = await fetch(url, { method: "POST" }); // returns the response\n```\n';
const CHINESE = `# 部署服务

当用户要求把服务部署到生产环境时使用本技能。先确认所有测试都已通过，然后检查配置文件中的环境变量。
${CODE}
## 步骤

1. 运行 \`npm test\`，确认没有失败的测试。
2. 查看 [发布说明](https://example.com/release-notes) 并记录本次变更。
3. 部署完成后，观察错误日志十分钟，如有异常立即回滚。
`;
const JAPANESE = `# コードレビュー

プルリクエストをレビューするときにこのスキルを使います。まず変更の目的を確認し、テストが追加されているかを調べてください。
${CODE}
## 手順

1. 変更内容の説明を読み、関連する課題を確認します。
2. エラー処理がすべての入力経路にあるかを確認します。
3. スタイルについてのコメントと正しさについてのコメントを分けて書きます。
`;
const SPANISH = `# Revisar solicitudes de cambios

Usa esta habilidad cuando te pidan revisar una solicitud de cambios antes de fusionarla con la rama principal.
${CODE}
## Pasos

1. Lee la descripción del cambio y la incidencia relacionada para saber qué debería hacer.
2. Comprueba que las pruebas cubren el nuevo comportamiento y que fallan sin el cambio.
3. Busca el manejo de errores en cada camino que lee datos del usuario o de la red.
`;
const RUSSIAN = `# Проверка запросов на слияние

Используйте этот навык, когда вас просят проверить запрос на слияние перед тем, как его примут.
${CODE}
## Шаги

1. Прочитайте описание изменения и связанную задачу, чтобы понять, что оно должно делать.
2. Убедитесь, что тесты покрывают новое поведение и падают без изменения.
3. Проверьте обработку ошибок на каждом пути, который читает данные пользователя или сети.
`;

describe('detectNonEnglish', () => {
  it('keeps English prose, with or without code, links and a few foreign words', () => {
    expect(detectNonEnglish(ENGLISH_BODY)).toBeNull();
    expect(
      detectNonEnglish(`${ENGLISH_BODY}${CODE}See [the guide](https://example.com/guía) and the 中文 label.`),
    ).toBeNull();
    const terse =
      '# API\n\n- `GET /users` list users\n- `POST /users` create a user\n- `DELETE /users/:id` remove one\n';
    expect(detectNonEnglish(terse)).toBeNull();
  });

  it('keeps English prose that documents text in other scripts inside code', () => {
    const body = `${ENGLISH_BODY}\n\`\`\`json\n${JSON.stringify({ zh: '你好世界，这是一个测试字符串。'.repeat(40) })}\n\`\`\`\n`;
    expect(detectNonEnglish(body)).toBeNull();
  });

  it('skips Chinese, Japanese and Russian bodies, naming the script', () => {
    expect(detectNonEnglish(CHINESE)).toMatch(
      /^not English: \d+% of the prose words are in a non-Latin script, mostly Han/,
    );
    expect(detectNonEnglish(JAPANESE)).toMatch(
      /not English: \d+% of the prose words are in a non-Latin script, mostly (Han|Japanese kana)/,
    );
    expect(detectNonEnglish(RUSSIAN)).toMatch(
      /not English: \d+% of the prose words are in a non-Latin script, mostly Cyrillic/,
    );
  });

  it('skips a Spanish body by language, not by script', () => {
    expect(detectNonEnglish(SPANISH)).toMatch(/not English: the prose reads as 'spa'/);
  });

  it('keeps bodies too short to judge', () => {
    expect(detectNonEnglish('# 部署\n\n使用本技能。')).toBeNull();
    expect(detectNonEnglish('')).toBeNull();
  });

  it('strips fenced and inline code, link targets and URLs from the prose', () => {
    const prose = proseOf(
      'Run `rm -rf x` now.\n  ```sh\n  echo hi\n  ```\nSee [docs](https://a.b/c) or https://d.e/f.\n',
    );
    expect(prose).not.toMatch(/rm -rf|echo|a\.b|d\.e/);
    expect(prose).toMatch(/Run .* now\./);
    expect(prose).toContain('docs');
  });
});

describe('licenseForbidsReuse', () => {
  it('lets open licences and absent licences through', () => {
    for (const ok of [
      undefined,
      null,
      '',
      'MIT',
      'Apache-2.0',
      'isc',
      'BSD-3-Clause',
      '(MIT OR Apache-2.0)',
      'CC-BY-4.0',
      'Unlicense',
      'GPL-3.0-only',
    ]) {
      expect(licenseForbidsReuse(ok), String(ok)).toBeNull();
    }
  });

  it('lets a pointer to terms it cannot judge through', () => {
    expect(licenseForbidsReuse('Complete terms in LICENSE.txt')).toBeNull();
    expect(licenseForbidsReuse('SEE LICENSE IN LICENSE.md')).toBeNull();
  });

  it('refuses explicit restrictions and says which', () => {
    expect(licenseForbidsReuse('Proprietary. LICENSE.txt has complete terms')).toMatch(/proprietary/);
    expect(licenseForbidsReuse('Copyright 2025 Acme Corp. All rights reserved.')).toMatch(/all rights reserved/);
    expect(licenseForbidsReuse('UNLICENSED')).toMatch(/UNLICENSED/);
    expect(licenseForbidsReuse('CC-BY-NC-ND-4.0')).toMatch(/no derivatives/);
    expect(licenseForbidsReuse('Internal use only; do not redistribute.')).toMatch(/redistribution not permitted/);
  });
});
