// The Settings page's form (renderer/src/lib/settings/settings-form.ts) over the in-memory transport against the
// real services and SQLite: it reads every key, checks fields with the contract's schema before sending,
// sends only what changed, keeps the stored API key unless replaced or removed, and shows API errors.
import { describe, expect, it } from 'vitest';
import { type StudioApi } from '../../../common/api/contract';
import { DEFAULT_SETTINGS, Settings } from '../../../common/api/trajectory-schemas';
import { StudioError } from '../../../common/errors';
import { DEFAULT_BUNDLE_DIR } from '../../../main/paths';
import {
  draftOf,
  patchOf,
  SETTING_KEYS,
  SettingsForm,
  settingsNotes,
  type SettingsSnapshot,
} from '../../../renderer/src/lib/settings/settings-form';
import { memory, studioSuite } from './transports';

describe('Settings form over the in-memory transport', () => {
  const suite = studioSuite(memory, 'pskills-settings-form-', { defaultBundleDir: DEFAULT_BUNDLE_DIR });

  it('the form covers every key of the contract schema', () => {
    expect(SETTING_KEYS.sort()).toEqual(Object.keys(Settings.shape).sort());
    expect(Object.keys(draftOf(DEFAULT_SETTINGS)).sort()).toEqual(SETTING_KEYS.sort());
  });

  it('loads the defaults, saves only the changed keys, and reads them back', async () => {
    const snaps: SettingsSnapshot[] = [];
    const form = new SettingsForm(suite.api, (s) => snaps.push(s));
    expect(await form.load()).toBe(true);
    expect(form.snapshot.saved).toEqual(DEFAULT_SETTINGS);
    expect(snaps[0]!.busy).toBe('load');
    expect(await form.save()).toBe(false); // nothing changed: nothing sent

    form.edit('llmBaseUrl', '  http://127.0.0.1:8080/v1 ');
    form.edit('llmModel', 'tiny');
    form.edit('executionProvider', 'webgpu');
    expect(form.snapshot.changed.sort()).toEqual(['executionProvider', 'llmBaseUrl', 'llmModel']);
    expect(await form.save()).toBe(true);
    expect(form.snapshot.stored!.sort()).toEqual(['executionProvider', 'llmBaseUrl', 'llmModel']);
    expect(form.snapshot.changed).toEqual([]);
    expect(await suite.api.settings.get({})).toEqual({
      ...DEFAULT_SETTINGS,
      llmBaseUrl: 'http://127.0.0.1:8080/v1',
      llmModel: 'tiny',
      executionProvider: 'webgpu',
    });

    // Emptying a text field stores null.
    form.edit('llmModel', '');
    expect(await form.save()).toBe(true);
    expect((await suite.api.settings.get({})).llmModel).toBeNull();
  });

  it('a bad field is named with the schema message and nothing is sent', async () => {
    await suite.api.settings.set({ llmBaseUrl: null });
    const form = new SettingsForm(suite.api);
    await form.load();
    form.edit('llmBaseUrl', 'ftp://example.org');
    form.edit('storeTrajectories', false);
    expect(form.snapshot.errors).toEqual({ llmBaseUrl: 'an http:// or https:// URL' });
    expect(await form.save()).toBe(false);
    expect((await suite.api.settings.get({})).storeTrajectories).toBe(true);
    form.edit('llmBaseUrl', 'https://llm.example/v1');
    expect(form.snapshot.errors).toEqual({});
    expect(await form.save()).toBe(true);
    expect(await suite.api.settings.get({})).toMatchObject({
      storeTrajectories: false,
      llmBaseUrl: 'https://llm.example/v1',
    });
    form.edit('llmModel', 'm'.repeat(201));
    expect(form.snapshot.errors.llmModel).toMatch(/200/);
  });

  it('the API key stays stored unless replaced or removed, and is never put in the draft', async () => {
    await suite.api.settings.set({ llmApiKey: 'sk-secret' });
    const form = new SettingsForm(suite.api);
    await form.load();
    expect(form.snapshot.draft!.llmApiKey).toBeNull();
    expect(form.snapshot.changed).toEqual([]);
    form.edit('storeTrajectories', true);
    expect(patchOf(form.snapshot.draft!, form.snapshot.saved!).patch).toEqual({ storeTrajectories: true });
    expect(await form.save()).toBe(true);
    expect((await suite.api.settings.get({})).llmApiKey).toBe('sk-secret');

    form.edit('llmApiKey', 'sk-new');
    expect(await form.save()).toBe(true);
    expect((await suite.api.settings.get({})).llmApiKey).toBe('sk-new');
    expect(form.snapshot.draft!.llmApiKey).toBeNull();

    form.edit('llmApiKey', '');
    expect(form.snapshot.changed).toEqual(['llmApiKey']);
    expect(await form.save()).toBe(true);
    expect((await suite.api.settings.get({})).llmApiKey).toBeNull();
  });

  it('revert goes back to what is stored', async () => {
    const form = new SettingsForm(suite.api);
    await form.load();
    const before = form.snapshot.draft;
    form.edit('llmModel', 'other');
    form.revert();
    expect(form.snapshot.draft).toEqual(before);
    expect(form.snapshot.changed).toEqual([]);
  });

  it('an API failure is kept as the form error, the draft stays', async () => {
    const failing = {
      settings: {
        get: () => Promise.resolve(DEFAULT_SETTINGS),
        set: () => Promise.reject(new StudioError('internal', 'disk full')),
      },
    } as unknown as Pick<StudioApi, 'settings'>;
    const form = new SettingsForm(failing);
    await form.load();
    form.edit('llmModel', 'x');
    expect(await form.save()).toBe(false);
    expect(form.snapshot.error).toEqual({ code: 'internal', message: 'disk full' });
    expect(form.snapshot.draft!.llmModel).toBe('x');
    expect(form.snapshot.busy).toBeNull();
  });

  it('notes a URL without a model and a model without a URL', () => {
    const d = draftOf(DEFAULT_SETTINGS);
    expect(settingsNotes(d)).toEqual([]);
    expect(settingsNotes({ ...d, llmBaseUrl: 'http://x/v1' })[0]).toMatch(/model name/);
    expect(settingsNotes({ ...d, llmModel: 'm' })[0]).toMatch(/without an endpoint/);
  });
});
