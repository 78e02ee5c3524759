// main/'s rooms, lowest first (docs/design.md "Rooms"); '.' is the modules at main/'s top (paths, threads,
// the worker client, the training venv). A room imports only the rooms before it. Read by
// eslint.config.js (static imports) and scripts/lint-layers.mjs (every import form, and circles).
export const mainRooms = [
  '.',
  'files',
  'adapters',
  'engine',
  'store',
  'skills',
  'llm',
  'evolve',
  'models',
  'continual',
  'api',
  'cli',
  'electron',
];
