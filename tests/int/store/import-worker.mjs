// Worker-thread entry for two-writers.int.test.ts: registers tsx, then loads the TypeScript body.
import { register } from 'tsx/esm/api';

register();
await import('./import-worker.ts');
