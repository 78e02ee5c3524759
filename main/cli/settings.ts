// `pskills settings show|set`: the studio's settings (storeTrajectories: whether compare, the
// Playground, verify and the endpoint, on request, keep what they ran; llmBaseUrl, llmModel, llmApiKey:
// the OpenAI-compatible endpoint evolve's LLM generator asks; `null` clears one).
import { Settings } from '../../common/api/trajectory-schemas';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import { usageError } from './usage';

const KEYS = Object.keys(Settings.shape);

export const settingsShow: Command = {
  name: 'settings show',
  usage: '',
  summary: "the studio's settings, each with its value",
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length) throw usageError(settingsShow);
    const s = await withStudio(values, (api) => api.settings.get({}));
    if (values.json) io.out(JSON.stringify(s));
    else for (const [k, v] of Object.entries(s)) io.out(`${k}\t${JSON.stringify(v)}`);
  },
};

export const settingsSet: Command = {
  name: 'settings set',
  usage: `<${KEYS.join('|')}> <value>`,
  summary: 'stores one setting (booleans: true or false; text as is; null clears)',
  async run(argv, { io, flags, withStudio }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length !== 2) throw usageError(settingsSet);
    const [key, text] = positionals as [string, string];
    if (!KEYS.includes(key))
      throw new StudioError('invalid_input', `no setting "${key}" (settings: ${KEYS.join(', ')})`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    const s = await withStudio(values, (api) => api.settings.set({ [key]: value }));
    if (values.json) io.out(JSON.stringify(s));
    else io.out(`${key}\t${JSON.stringify(s[key as keyof typeof s])}`);
  },
};
