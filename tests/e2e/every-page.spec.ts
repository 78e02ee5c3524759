// Every page of the studio, in Chromium against `pskills serve` on the default bundle, in light and
// dark: an axe scan (WCAG 2 A/AA rules) fails the test on any serious or critical violation; a text
// scan fails it on raw JSON (`{"`) or a zod issue path anywhere on the page or in an error notice;
// and each page's screenshot is written for docs/guide.md ("Every page").
// Run: node --import tsx --test tests/e2e/every-page.spec.ts
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import type { AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { INTERNAL_NAMES } from '../../renderer/src/lib/shared/words';
import { apiCall, openStudio, ROOT, SCREENSHOTS, type Host, type Studio } from './harness';

const PAGES_DIR = join(SCREENSHOTS, 'pages');
const TINY = join(ROOT, 'tests/fixtures/bundle-tiny');
const SKILL = 'brotro-mixtus';

/** What a person must never read: raw JSON, and zod's issue paths and codes. */
const RAW = [
  { what: 'raw JSON', re: /\{"/ },
  { what: 'a JSON path array', re: /\[\s*"[A-Za-z_]\w*"\s*,\s*(\d+|"[^"]*")/ },
  { what: 'a zod path', re: /\b[A-Za-z_]+\.\d+\.[A-Za-z_]+\b/ },
  {
    what: 'a zod issue code',
    re: /\b(invalid_type|invalid_union|invalid_value|too_small|too_big|unrecognized_keys)\b/,
  },
  { what: 'a zod "path" field', re: /"path"\s*:/ },
  // One vocabulary on screen (renderer/src/lib/shared/words.ts): never the API's own names.
  { what: 'an internal name', re: INTERNAL_NAMES },
];

interface Shot {
  name: string;
  /** The hash route (after the token); null: stay where the previous step left the page. */
  route: string | null;
  /** What shows once the page is there. */
  ready: string;
  /** Runs after the page is there, before the scans (opens a dialog, triggers an error notice). */
  act?: (page: Page) => Promise<void>;
  /** Runs after the screenshot (closes what `act` opened). */
  cleanup?: (page: Page) => Promise<void>;
  /** Light only: a state the dark pass would repeat for nothing. */
  once?: boolean;
}

describe('every page: axe, raw messages, screenshots in light and dark', { timeout: 900_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let work: string;
  let adapterId = '';
  const found: string[] = [];

  async function scan(name: string, theme: 'light' | 'dark'): Promise<void> {
    const result = await new AxeBuilder({ page })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
      // Monaco's own editor DOM (a third-party widget the studio does not render) is scanned by its makers.
      .exclude('.monaco-editor')
      .analyze();
    for (const v of result.violations) {
      if (v.impact !== 'serious' && v.impact !== 'critical') continue;
      const where = v.nodes
        .slice(0, 3)
        .map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1).join(' ').trim()}`)
        .join(' | ');
      found.push(`${name} (${theme}): axe ${v.impact} ${v.id}: ${v.help} — ${where}`);
    }
    // Editors and answers show the user's own text (a SKILL.md, a model's output), not a message: left out.
    const text = (await page.evaluate(`(() => {
      const skip = [...document.querySelectorAll('.monaco-editor, [data-testid="column-output"], pre.output, .markdown')];
      const was = skip.map((el) => el.style.display);
      skip.forEach((el) => (el.style.display = 'none'));
      const all = document.body.innerText;
      skip.forEach((el, i) => (el.style.display = was[i]));
      return all;
    })()`)) as string;
    for (const { what, re } of RAW) {
      const m = re.exec(text);
      if (m) found.push(`${name} (${theme}): ${what}: …${text.slice(Math.max(0, m.index - 60), m.index + 60)}…`);
    }
  }

  const shots: Shot[] = [
    { name: 'library-empty', route: '#/library', ready: 'first-run' },
    {
      name: 'import-error',
      route: '#/library',
      ready: 'first-run',
      act: async (p) => {
        await p.getByTestId('library-import').click();
        await p.getByTestId('import-source').fill('/no/such/folder/anywhere');
        await p.getByTestId('import-start').click();
        await p.getByTestId('import-dialog').getByTestId('error').first().waitFor();
      },
    },
    {
      name: 'library',
      route: '#/library',
      ready: 'skill-row',
      act: async (p) => {
        await p.keyboard.press('Escape');
      },
    },
    { name: 'skill', route: `#/skill/${SKILL}`, ready: 'skill-reading' },
    { name: 'editor', route: `#/skill/${SKILL}/edit`, ready: 'editor-pane' },
    {
      name: 'compare',
      route: `#/skill/${SKILL}/compare`,
      ready: 'skill-lab',
      // A comparison run, so its verdicts are scanned and the Trajectories page lists its rows.
      act: async (p) => {
        if ((await p.getByTestId('compare-panel').getAttribute('data-status')) === 'done') return;
        await p.getByTestId('compare-prompt').fill('Log meter 1057.');
        await p.getByTestId('compare-run').click();
        const end = Date.now() + 180_000;
        while ((await p.getByTestId('compare-panel').getAttribute('data-status')) !== 'done') {
          if (Date.now() > end) throw new Error('the comparison did not end in 180 s');
          await new Promise((r) => setTimeout(r, 200));
        }
      },
    },
    { name: 'tests', route: `#/skill/${SKILL}/tests`, ready: 'tests-view' },
    { name: 'evolve', route: `#/skill/${SKILL}/evolve`, ready: 'evolve-view' },
    { name: 'playground', route: '#/playground', ready: 'playground' },
    { name: 'models', route: '#/models', ready: 'model-card' },
    { name: 'adapters', route: '#/adapters', ready: 'adapter-row' },
    {
      name: 'adapter-detail',
      route: null,
      ready: 'adapter-panel-name',
      act: async (p) => {
        await p.getByTestId('export-dir').fill('relative/out');
        await p.getByTestId('export-run').click();
        await p.getByTestId('adapter-export').getByTestId('error').first().waitFor();
      },
    },
    { name: 'global-adapter', route: '#/adapters/global', ready: 'global-timeline' },
    { name: 'trajectories', route: '#/trajectories', ready: 'nav-trajectories' },
    { name: 'continual', route: '#/continual', ready: 'continual-page' },
    { name: 'settings', route: '#/settings', ready: 'settings-page' },
    {
      name: 'new-skill-taken',
      route: '#/library',
      ready: 'skill-row',
      once: true,
      act: async (p) => {
        await p.getByTestId('library-new-skill').click();
        await p.getByTestId('new-skill-name').fill(SKILL);
        await p.getByTestId('new-skill-create').click();
        await p.getByTestId('new-skill-name-error').waitFor();
      },
      cleanup: async (p) => {
        await p.keyboard.press('Escape');
        await p.getByTestId('new-skill-dialog').waitFor({ state: 'hidden' });
      },
    },
  ];

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-pages-'));
    mkdirSync(PAGES_DIR, { recursive: true });
    studio = await openStudio();
    ({ host, page, problems } = studio);
    // An adapter to show: a PEFT folder made for the tiny fixture bundle, then back to the default bundle.
    await apiCall(host, 'engine.loadBundle', { dir: TINY });
    const dir = join(work, 'peft');
    await writeFixturePeft(dir, 1);
    adapterId = (await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter.id;
    await apiCall(host, 'engine.loadBundle', {});
    await page.goto(host.url); // the token goes into the tab's session; later routes need only the hash
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`every page in ${theme}`, async () => {
      await page.emulateMedia({ colorScheme: theme });
      for (const shot of shots) {
        if (shot.name === 'library' && theme === 'light') await apiCall(host, 'import.example', {});
        if (shot.name === 'library-empty' && theme === 'dark') continue; // the library is no longer empty
        if ((shot.name === 'import-error' || shot.once) && theme === 'dark') continue;
        const route = shot.name === 'adapter-detail' ? `#/adapters/${adapterId}` : shot.route;
        if (route !== null) {
          await page.goto(`${host.origin}/${route}`);
          // The Library reads its list on load: show the example's skills once they are imported.
          if (shot.name === 'library' && theme === 'light') await page.reload();
        }
        await page.getByTestId(shot.ready).first().waitFor({ timeout: 60_000 });
        await shot.act?.(page);
        await new Promise((r) => setTimeout(r, 400)); // charts and fonts settle
        await scan(shot.name, theme);
        await page.screenshot({ path: join(PAGES_DIR, `${shot.name}-${theme}.png`) });
        await shot.cleanup?.(page);
      }
    });
  }

  test('no serious or critical axe violation and no raw message on any page', () => {
    assert.deepEqual(found, []);
  });

  test('no console errors, page errors or failed requests', () => {
    // The import of a missing folder and the relative export path are refused on purpose (a 4xx).
    assert.deepEqual(
      problems.filter((p) => !/status of 4\d\d/.test(p)),
      [],
    );
  });
});
