import { describe, expect, it } from 'vitest';
import { CANCEL, closePrompt, LEAVE, mayClose, parseUnsaved } from '../../../main/electron/close-guard';

describe('window close guard', () => {
  it('closes at once, without a dialog, when nothing is unsaved', () => {
    expect(closePrompt(null)).toBeNull();
    expect(mayClose(null, null)).toBe(true);
  });

  it('asks Leave / Cancel, naming the skill, when text is unsaved', () => {
    const p = closePrompt('pdf-tools');
    expect(p).not.toBeNull();
    expect(p!.buttons).toEqual(['Leave', 'Cancel']);
    expect(p!.buttons[LEAVE]).toBe('Leave');
    expect(p!.cancelId).toBe(CANCEL);
    expect(p!.defaultId).toBe(CANCEL);
    expect(p!.message).toContain('pdf-tools');
    expect(p!.detail).toMatch(/draft/);
  });

  it('closes only on Leave; Cancel, Esc or a dismissed dialog keep the window', () => {
    expect(mayClose('pdf-tools', LEAVE)).toBe(true);
    expect(mayClose('pdf-tools', CANCEL)).toBe(false);
    expect(mayClose('pdf-tools', null)).toBe(false);
    expect(mayClose('pdf-tools', 7)).toBe(false);
  });

  it('reads the renderer report defensively', () => {
    expect(parseUnsaved('pdf-tools')).toBe('pdf-tools');
    expect(parseUnsaved(null)).toBeNull();
    expect(parseUnsaved('')).toBeNull();
    expect(parseUnsaved('   ')).toBeNull();
    expect(parseUnsaved(42)).toBeNull();
    expect(parseUnsaved({ name: 'x' })).toBeNull();
    expect(parseUnsaved('x'.repeat(1000))).toHaveLength(200);
  });
});
