// `pskills adapters list|show|export|import`: the adapter library from the shell, through the same
// StudioApi the UI uses. --json prints the API's objects.
import { resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import type { AdapterDetail, AdapterSummary } from '../../common/api/adapter-schemas';
import type { Command } from './command';
import type { CliContext, Io } from './context';
import { usageError } from './usage';

// Every adapters subcommand has taken both (--bundle loads that bundle first).
const OPTIONS = {
  out: { type: 'string' },
  bundle: { type: 'string' },
  force: { type: 'boolean' },
  format: { type: 'string' },
  dtype: { type: 'string' },
  base: { type: 'string' },
} as const;
const FORMATS = ['peft', 'gguf', 'ollama'] as const;
const DTYPES = ['f32', 'f16'] as const;

/** --format and --dtype checked here, so a typo is a usage error naming the choices. */
function choice<T extends string>(flag: string, value: string | undefined, of: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(of as readonly string[]).includes(value))
    throw new StudioError('invalid_input', `--${flag} ${value}: one of ${of.join(', ')}`);
  return value as T;
}

const recipeText = (a: AdapterSummary): string =>
  a.recipe.kind === 'merge' ? `merge:${a.recipe.method}` : a.recipe.kind;

function printDetail(d: AdapterDetail, io: Io): void {
  io.out(`${d.id}  rank ${d.rank}  alpha ${d.alpha}  ${recipeText(d)}  bundle ${d.bundle.id}  ${d.createdAt}`);
  if (d.lineage.length) io.out(`lineage: ${d.lineage.map((l) => `${l.id}×${l.weight}`).join(' + ')}`);
  io.out(`‖ΔW‖_F overall ${d.stats.norms.overall.toPrecision(4)}`);
  d.stats.norms.perTarget.forEach((t, i) => {
    const sv = d.stats.singularValues[i]!.values.map((v) => v.toPrecision(3)).join(' ');
    io.out(`  layer ${t.layer} ${t.module.padEnd(5)} ‖ΔW‖_F ${t.value.toPrecision(4)}  σ ${sv}`);
  });
}

/** The flags, and the one positional argument a subcommand takes (a usage error otherwise). */
function oneArgument(command: Command, argv: string[], ctx: CliContext) {
  const { values, positionals } = ctx.flags.parse(argv, OPTIONS);
  if (positionals.length !== 1) throw usageError(command);
  return { values, arg: positionals[0]! };
}

export const adaptersList: Command = {
  name: 'adapters list',
  usage: '',
  summary: 'the adapter library: id, rank, recipe, bundle, date',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, OPTIONS);
    if (positionals.length) throw usageError(adaptersList);
    const rows = await withStudio(values, (api) => api.adapters.list({}));
    if (values.json) io.out(JSON.stringify(rows));
    else for (const a of rows) io.out(`${a.id}\trank ${a.rank}\t${recipeText(a)}\t${a.bundle.id}\t${a.createdAt}`);
  },
};

export const adaptersShow: Command = {
  name: 'adapters show',
  usage: '<id>',
  summary: 'one adapter: lineage, ‖ΔW‖_F and σ per layer and module',
  async run(argv, ctx) {
    const { values, arg: id } = oneArgument(adaptersShow, argv, ctx);
    const d = await ctx.withStudio(values, (api) => api.adapters.get({ id }));
    if (values.json) ctx.io.out(JSON.stringify(d));
    else printDetail(d, ctx.io);
  },
};

export const adaptersExport: Command = {
  name: 'adapters export',
  usage: '<id> --out DIR|FILE.gguf [--format peft|gguf|ollama] [--dtype f32|f16] [--base FILE.gguf] [--force]',
  summary: 'a PEFT folder, a llama.cpp LoRA FILE.gguf, or an Ollama folder (adapter + Modelfile)',
  async run(argv, ctx) {
    const { values, arg: id } = oneArgument(adaptersExport, argv, ctx);
    if (!values.out) throw usageError(adaptersExport);
    const format = choice('format', values.format, FORMATS);
    const dtype = choice('dtype', values.dtype, DTYPES);
    const r = await ctx.withStudio(values, (api) =>
      api.adapters.export({
        id,
        dir: resolve(values.out!),
        ...(values.force && { overwrite: true }),
        ...(format && { format }),
        ...(dtype && { dtype }),
        ...(values.base && { base: resolve(values.base) }),
      }),
    );
    ctx.io.out(values.json ? JSON.stringify(r) : `exported ${id} to ${format === 'gguf' ? values.out : r.dir}`);
  },
};

export const adaptersImport: Command = {
  name: 'adapters import',
  usage: '<dir|FILE.gguf> [--bundle DIR]',
  summary: 'a PEFT folder or a llama.cpp LoRA .gguf into the library; it must fit the bundle',
  async run(argv, ctx) {
    const { values, arg } = oneArgument(adaptersImport, argv, ctx);
    const { adapter, created } = await ctx.withStudio(values, (api) => api.adapters.import({ dir: resolve(arg) }));
    if (values.json) ctx.io.out(JSON.stringify({ adapter: adapter.id, rank: adapter.rank, created }));
    else ctx.io.out(`${created ? 'imported' : 'already in the library:'} ${adapter.id} (rank ${adapter.rank})`);
  },
};
