// The theme choices as the pickers show them, in order, with their words and icons: the sidebar's
// compact toggle (ThemeToggle) and the Settings page's choices (ThemeChoices) share them.
import { ThemeDarkIcon, ThemeLightIcon, ThemeSystemIcon } from '../shared/icons';
import { THEME_CHOICES, type ThemeChoice } from './theme';

export interface ThemeOption {
  choice: ThemeChoice;
  label: string;
  icon: typeof ThemeLightIcon;
}

const BY_CHOICE: Record<ThemeChoice, Omit<ThemeOption, 'choice'>> = {
  light: { label: 'Light', icon: ThemeLightIcon },
  dark: { label: 'Dark', icon: ThemeDarkIcon },
  system: { label: 'Follow the system', icon: ThemeSystemIcon },
};

export const THEME_OPTIONS: readonly ThemeOption[] = THEME_CHOICES.map((choice) => ({ choice, ...BY_CHOICE[choice] }));
