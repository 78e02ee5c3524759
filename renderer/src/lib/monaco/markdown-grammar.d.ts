// monaco-editor ships the Monarch grammar module without typings; it exports these two values.
declare module 'monaco-editor/languages/definitions/markdown/markdown' {
  import type { languages } from 'monaco-editor/editor';
  export const conf: languages.LanguageConfiguration;
  export const language: languages.IMonarchLanguage;
}
