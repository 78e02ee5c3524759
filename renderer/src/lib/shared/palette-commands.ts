// The palette's commands, built from what the window can do right now: the pages, Import, New skill,
// Try an example; on a skill's page Compile, Distil, Compare and (an example skill) Run the example; on
// an adapter's page Export; the theme, the shortcut list, and one "open" row per skill in the library.
// Pure: the host is a small interface, so the unit tests build the list without the app.
import type { PaletteCommand } from './palette';
import type { Route } from './routes';
import type { ThemeChoice } from '../settings/theme';

export interface PaletteHost {
  route: Route;
  /** Every skill name in the library, A–Z. */
  skills: readonly string[];
  themeChoice: ThemeChoice;
  go(route: Route): void;
  openImport(): void;
  openNewSkill(): void;
  /** Compile of the skill (version null: the latest); the caller shows its Compile panel. */
  compile(name: string, version: number | null): void;
  /** Distillation of the skill with its plan's questions and steps; the caller shows the Distil panel. */
  distil(name: string, version: number | null): void;
  /** A comparison on the compare page's prompt (the page asks for one when there is none). */
  compare(name: string, version: number | null): void;
  /** The skill's "Run the example", when it is an example skill. */
  runExample?: (name: string, version: number | null) => void;
  /** Imports the example skills and opens one on the compare page. */
  tryExample(): void;
  /** The adapter's PEFT export form, on its page. */
  exportAdapter(id: string): void;
  setTheme(choice: ThemeChoice): void;
  showShortcuts(): void;
}

const THEME_TITLES: Record<ThemeChoice, string> = {
  light: 'Theme: Light',
  dark: 'Theme: Dark',
  system: 'Theme: Follow the system',
};

/** The "Go to" rows: each page with the words that find it. */
const PAGES: [title: string, keywords: string, route: Route][] = [
  ['Library', 'skills list', { page: 'library' }],
  ['Playground', 'generate chat model bundle', { page: 'playground' }],
  ['Models', 'bundle base model checkpoint hugging face qwen llama mistral', { page: 'models' }],
  ['Adapters', 'lora merge global timeline', { page: 'adapters', id: null }],
  ['Trajectories', 'history ratings', { page: 'trajectories', id: null }],
  ['Continual learning', 'continual episodes lessons ema global skillworld pass rate', { page: 'continual' }],
  ['Settings', 'preferences options llm endpoint api key provider theme trajectories', { page: 'settings' }],
];

export function paletteCommands(host: PaletteHost): PaletteCommand[] {
  return [
    ...PAGES.map(([title, keywords, route]): PaletteCommand => ({
      id: `go:${route.page}`,
      title: `Go to ${title}`,
      group: 'Go to',
      keywords,
      run: () => host.go({ ...route }),
    })),
    {
      id: 'import',
      title: 'Import skills…',
      group: 'Actions',
      keywords: 'npm folder tgz package add',
      run: () => host.openImport(),
    },
    {
      id: 'new-skill',
      title: 'New skill…',
      group: 'Actions',
      keywords: 'create write skill.md template add',
      run: () => host.openNewSkill(),
    },
    {
      id: 'try-example',
      title: 'Try an example',
      group: 'Actions',
      keywords: 'example demo skillworld first run tutorial',
      run: () => host.tryExample(),
    },
    ...pageActions(host),
    {
      id: 'shortcuts',
      title: 'Show keyboard shortcuts',
      group: 'Actions',
      keywords: 'keys help keyboard',
      run: () => host.showShortcuts(),
    },
    ...(['light', 'dark', 'system'] as const)
      .filter((choice) => choice !== host.themeChoice)
      .map((choice): PaletteCommand => ({
        id: `theme:${choice}`,
        title: THEME_TITLES[choice],
        group: 'Theme',
        keywords: 'toggle theme appearance colour color mode',
        run: () => host.setTheme(choice),
      })),
    ...host.skills.map((name): PaletteCommand => ({
      id: `skill:${name}`,
      title: name,
      group: 'Skills',
      keywords: 'open skill',
      run: () => host.go({ page: 'skill', name, version: null, view: 'read' }),
    })),
  ];
}

/** The actions of the page on screen: a skill's Compile, Distil, Compare (and Run the example for an
 *  example skill); an adapter's Export. */
function pageActions(host: PaletteHost): PaletteCommand[] {
  const route = host.route;
  if (route.page === 'adapters' && route.id) {
    const id = route.id;
    return [
      {
        id: 'export',
        title: `Export adapter ${id}…`,
        group: 'Actions',
        keywords: 'export peft lora folder save',
        run: () => host.exportAdapter(id),
      },
    ];
  }
  if (route.page !== 'skill') return [];
  const { name, version } = route;
  const at = `${name}${version === null ? '' : `@${version}`}`;
  const actions: PaletteCommand[] = [
    {
      id: 'compile',
      title: `Compile ${at}`,
      group: 'Actions',
      keywords: 'compile current skill adapter lora hypernetwork instant',
      run: () => host.compile(name, version),
    },
    {
      id: 'distil',
      title: `Distil ${at}`,
      group: 'Actions',
      keywords: 'distil distill distilled train adapter steps',
      run: () => host.distil(name, version),
    },
    {
      id: 'compare',
      title: `Compare ${at}`,
      group: 'Actions',
      keywords: 'compare columns no skill in context instant distilled wrong skill',
      run: () => host.compare(name, version),
    },
  ];
  const runExample = host.runExample;
  if (runExample)
    actions.push({
      id: 'run-example',
      title: `Run the example ${name}`,
      group: 'Actions',
      keywords: 'example run distil compare',
      run: () => runExample(name, version),
    });
  return actions;
}
