// `pskills adapters …`, `pskills merge …`, `pskills ema …`: the adapter library from the shell,
// through the same StudioApi the UI uses. --json prints the API's objects.
import { resolve } from 'node:path';
import type { AdapterDetail, AdapterSummary, GlobalVersion } from '../../common/api/adapter-schemas';
import { studioContract, type StudioApi } from '../../common/api/contract';
import { StudioError } from '../../common/errors';
import { createStudio } from '../api/root';
import { directClient } from '../api/transports/direct';
import { defaultDataDir } from '../paths';
import { parse } from './args';
import type { Io } from './commands';

export const ADAPTERS_USAGE = `  adapters list | show <id> | export <id> --out DIR | import <dir> [--bundle DIR]
  merge <id> <id>… --method cat|linear|svd [--weights w,…] [--rank k]
  ema update <id> [--beta B] [--rank K] | history [--bundle DIR] | rollback <n> [--bundle DIR]`;

const usage = (text: string) => new StudioError('invalid_input', `usage: pskills ${text}`);

/** Runs `f` against a studio on --data-dir, after loading --bundle when one is given. */
export async function withApi<T>(values: { 'data-dir'?: string; bundle?: string }, f: (api: StudioApi) => Promise<T>): Promise<T> {
  const studio = createStudio({ dataDir: values['data-dir'] ? resolve(values['data-dir']) : defaultDataDir() });
  try {
    const api = directClient(studioContract, studio.dispatcher);
    if (values.bundle) await api.engine.loadBundle({ dir: resolve(values.bundle) });
    return await f(api);
  } finally {
    await studio.dispose();
  }
}

function number(text: string, flag: string, integer = false): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new StudioError('invalid_input', `${flag}: "${text}" is not ${integer ? 'an integer' : 'a number'}`);
  }
  return n;
}

const recipeText = (a: AdapterSummary) => (a.recipe.kind === 'merge' ? `merge:${a.recipe.method}` : a.recipe.kind);
const versionText = (v: GlobalVersion) =>
  `v${v.version}\t${v.kind === 'rollback' ? `rollback to v${v.restoresVersion}` : `ema β=${v.beta}`}\tadapter ${v.adapter}\trank ${v.rank}\t${v.createdAt}`;

function printDetail(d: AdapterDetail, io: Io): void {
  io.out(`${d.id}  rank ${d.rank}  alpha ${d.alpha}  ${recipeText(d)}  bundle ${d.bundle.id}  ${d.createdAt}`);
  if (d.lineage.length) io.out(`lineage: ${d.lineage.map((l) => `${l.id}×${l.weight}`).join(' + ')}`);
  io.out(`‖ΔW‖_F overall ${d.stats.norms.overall.toPrecision(4)}`);
  d.stats.norms.perTarget.forEach((t, i) => {
    const sv = d.stats.singularValues[i]!.values.map((v) => v.toPrecision(3)).join(' ');
    io.out(`  layer ${t.layer} ${t.module.padEnd(5)} ‖ΔW‖_F ${t.value.toPrecision(4)}  σ ${sv}`);
  });
}

export async function runAdapters(argv: string[], io: Io): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, { out: { type: 'string' }, bundle: { type: 'string' } });
  const one = (what: string) => {
    if (positionals.length !== 1) throw usage(`adapters ${sub} ${what}`);
    return positionals[0]!;
  };
  if (sub === 'list') {
    if (positionals.length) throw usage('adapters list');
    const rows = await withApi(values, (api) => api.adapters.list({}));
    if (values.json) io.out(JSON.stringify(rows));
    else for (const a of rows) io.out(`${a.id}\trank ${a.rank}\t${recipeText(a)}\t${a.bundle.id}\t${a.createdAt}`);
  } else if (sub === 'show') {
    const id = one('<id>');
    const d = await withApi(values, (api) => api.adapters.get({ id }));
    if (values.json) io.out(JSON.stringify(d));
    else printDetail(d, io);
  } else if (sub === 'export') {
    const id = one('<id> --out DIR');
    if (!values.out) throw usage('adapters export <id> --out DIR');
    const r = await withApi(values, (api) => api.adapters.export({ id, dir: resolve(values.out!) }));
    io.out(values.json ? JSON.stringify(r) : `exported ${id} to ${r.dir}`);
  } else if (sub === 'import') {
    const dir = resolve(one('<dir> [--bundle DIR]'));
    const { adapter, created } = await withApi(values, (api) => api.adapters.import({ dir }));
    if (values.json) io.out(JSON.stringify({ adapter: adapter.id, rank: adapter.rank, created }));
    else io.out(`${created ? 'imported' : 'already in the library:'} ${adapter.id} (rank ${adapter.rank})`);
  } else {
    throw usage(`adapters list|show|export|import …`);
  }
}

export async function runMerge(argv: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(argv, { method: { type: 'string' }, weights: { type: 'string' }, rank: { type: 'string' } });
  const method = values.method;
  if (positionals.length < 1 || (method !== 'cat' && method !== 'linear' && method !== 'svd')) {
    throw usage('merge <id> <id>… --method cat|linear|svd [--weights w,…] [--rank k]');
  }
  const weights = values.weights?.split(',').map((w) => number(w, '--weights'));
  const rank = values.rank === undefined ? undefined : number(values.rank, '--rank', true);
  const { adapter, created } = await withApi(values, (api) => api.adapters.merge({ ids: positionals, method, weights, rank }));
  if (values.json) io.out(JSON.stringify({ adapter: adapter.id, rank: adapter.rank }));
  else io.out(`${created ? 'merged' : 'already in the library:'} ${adapter.id} (rank ${adapter.rank})`);
}

export async function runEma(argv: string[], io: Io): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, { beta: { type: 'string' }, rank: { type: 'string' }, bundle: { type: 'string' } });
  if (sub === 'update') {
    if (positionals.length !== 1) throw usage('ema update <id> [--beta B] [--rank K]');
    const beta = values.beta === undefined ? undefined : number(values.beta, '--beta');
    const rankBudget = values.rank === undefined ? undefined : number(values.rank, '--rank', true);
    const r = await withApi(values, (api) => api.ema.update({ adapterId: positionals[0]!, beta, rankBudget }));
    io.out(values.json ? JSON.stringify({ version: r.version.version, adapter: r.adapter.id, rank: r.adapter.rank, beta: r.version.beta }) : versionText(r.version));
  } else if (sub === 'history') {
    if (positionals.length) throw usage('ema history [--bundle DIR]');
    const h = await withApi(values, (api) => api.ema.history({}));
    if (values.json) io.out(JSON.stringify(h));
    else if (h.versions.length === 0) io.out(`no global adapter yet for bundle ${h.bundle.id}`);
    else for (const v of h.versions) io.out(versionText(v));
  } else if (sub === 'rollback') {
    if (positionals.length !== 1) throw usage('ema rollback <n> [--bundle DIR]');
    const version = number(positionals[0]!, 'version', true);
    const v = await withApi(values, (api) => api.ema.rollback({ version }));
    io.out(values.json ? JSON.stringify(v) : versionText(v));
  } else {
    throw usage('ema update|history|rollback …');
  }
}
