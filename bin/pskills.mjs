#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `pskills` works from a fresh clone without a build.
import { register } from 'tsx/esm/api';

register();
await import('../main/cli/index.ts');
