// The studio's icon set: Lucide (one stroke style, 24-unit grid), imported one file per icon so only
// these are bundled. Use these names everywhere so a page and the palette show the same picture.
export { default as AdaptersIcon } from '@lucide/svelte/icons/layers';
export { default as ArchiveIcon } from '@lucide/svelte/icons/archive';
export { default as AlertIcon } from '@lucide/svelte/icons/circle-alert';
export { default as ContinualIcon } from '@lucide/svelte/icons/infinity';
export { default as CompileIcon } from '@lucide/svelte/icons/hammer';
export { default as FolderIcon } from '@lucide/svelte/icons/folder-open';
export { default as GoIcon } from '@lucide/svelte/icons/arrow-right';
export { default as ImportIcon } from '@lucide/svelte/icons/folder-input';
export { default as KeyboardIcon } from '@lucide/svelte/icons/keyboard';
export { default as LibraryIcon } from '@lucide/svelte/icons/library';
export { default as ModelsIcon } from '@lucide/svelte/icons/box';
export { default as PlaygroundIcon } from '@lucide/svelte/icons/play';
export { default as SearchIcon } from '@lucide/svelte/icons/search';
export { default as SettingsIcon } from '@lucide/svelte/icons/settings';
export { default as SkillIcon } from '@lucide/svelte/icons/file-text';
export { default as StopIcon } from '@lucide/svelte/icons/square';
export { default as ThemeDarkIcon } from '@lucide/svelte/icons/moon';
export { default as ThemeLightIcon } from '@lucide/svelte/icons/sun';
export { default as ThemeSystemIcon } from '@lucide/svelte/icons/monitor';
export { default as TrashIcon } from '@lucide/svelte/icons/trash-2';
export { default as TrajectoriesIcon } from '@lucide/svelte/icons/route';
