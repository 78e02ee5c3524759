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

export function paletteCommands(host: PaletteHost): PaletteCommand[] {
  const route = host.route;
  const commands: PaletteCommand[] = [
    {
      id: 'go:library',
      title: 'Go to Library',
      group: 'Go to',
      keywords: 'skills list',
      run: () => host.go({ page: 'library' }),
    },
    {
      id: 'go:playground',
      title: 'Go to Playground',
      group: 'Go to',
      keywords: 'generate chat model bundle',
      run: () => host.go({ page: 'playground' }),
    },
    {
      id: 'go:models',
      title: 'Go to Models',
      group: 'Go to',
      keywords: 'bundle base model checkpoint hugging face qwen llama mistral',
      run: () => host.go({ page: 'models' }),
    },
    {
      id: 'go:adapters',
      title: 'Go to Adapters',
      group: 'Go to',
      keywords: 'lora merge global timeline',
      run: () => host.go({ page: 'adapters', id: null }),
    },
    {
      id: 'go:trajectories',
      title: 'Go to Trajectories',
      group: 'Go to',
      keywords: 'history ratings',
      run: () => host.go({ page: 'trajectories', id: null }),
    },
    {
      id: 'go:continual',
      title: 'Go to Continual learning',
      group: 'Go to',
      keywords: 'continual episodes lessons ema global skillworld pass rate',
      run: () => host.go({ page: 'continual' }),
    },
    {
      id: 'go:settings',
      title: 'Go to Settings',
      group: 'Go to',
      keywords: 'preferences options llm endpoint api key provider theme trajectories',
      run: () => host.go({ page: 'settings' }),
    },
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
  ];
  commands.push({
    id: 'try-example',
    title: 'Try an example',
    group: 'Actions',
    keywords: 'example demo skillworld first run tutorial',
    run: () => host.tryExample(),
  });
  if (route.page === 'skill') {
    const { name, version } = route;
    const at = `${name}${version === null ? '' : `@${version}`}`;
    commands.push(
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
    );
    const runExample = host.runExample;
    if (runExample)
      commands.push({
        id: 'run-example',
        title: `Run the example ${name}`,
        group: 'Actions',
        keywords: 'example run distil compare',
        run: () => runExample(name, version),
      });
  }
  if (route.page === 'adapters' && route.id) {
    const id = route.id;
    commands.push({
      id: 'export',
      title: `Export adapter ${id}…`,
      group: 'Actions',
      keywords: 'export peft lora folder save',
      run: () => host.exportAdapter(id),
    });
  }
  commands.push(
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
  );
  return commands;
}
