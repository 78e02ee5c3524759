// The command palette's window state: open or not, what was typed, the highlighted row, and whether
// it lists commands or the keyboard shortcuts. The commands come from a function (palette-commands.ts
// over the app), the skill names from the API each time the palette opens.
import { filterCommands, moveSelection, type PaletteCommand } from './palette';

export type PaletteMode = 'commands' | 'shortcuts';

export class PaletteState {
  open = $state(false);
  query = $state('');
  index = $state(0);
  mode = $state<PaletteMode>('commands');
  /** Skill names for the "open a skill" rows, loaded when the palette opens. */
  skills = $state.raw<readonly string[]>([]);

  /** The rows for what was typed; recomputed when the query, the skills or the app state change. */
  readonly results: PaletteCommand[] = $derived.by(() => filterCommands(this.commands(this.skills), this.query));

  constructor(
    private readonly commands: (skills: readonly string[]) => PaletteCommand[],
    private readonly listSkills: () => Promise<string[]>,
  ) {}

  show(mode: PaletteMode = 'commands'): void {
    this.open = true;
    this.mode = mode;
    this.query = '';
    this.index = 0;
    this.listSkills().then(
      (names) => (this.skills = names),
      () => (this.skills = []), // the palette still navigates without the skill rows
    );
  }

  close(): void {
    this.open = false;
  }

  toggle(): void {
    if (this.open) this.close();
    else this.show();
  }

  setQuery(query: string): void {
    this.query = query;
    this.index = 0;
  }

  move(delta: number): void {
    this.index = moveSelection(this.index, delta, this.results.length);
  }

  /** Runs the highlighted (or the given) row and closes, unless the command opened another mode. */
  run(index = this.index): void {
    const command = this.results[index];
    if (!command) return;
    this.open = false;
    command.run();
  }
}
