// The command table: every pskills command, in the order USAGE lists them (a group's commands are
// listed together). Adding a command is one file exporting a Command and one entry here.
import { adaptersExport, adaptersImport, adaptersList, adaptersShow } from './adapters';
import { bundleCreate } from './bundle';
import type { Command } from './command';
import { compareCommand } from './compare';
import { compileCommand } from './compile';
import { continualRun } from './continual';
import { emaHistory, emaRollback, emaUpdate } from './ema';
import { evalCommand } from './eval';
import { evolveCommand } from './evolve';
import { generateCommand } from './generate';
import { importCommand } from './import';
import { mergeCommand } from './merge';
import { serveCommand } from './serve';
import { settingsSet, settingsShow } from './settings';
import { doctorCommand } from './doctor';
import { skillsCreate, skillsList, skillsShow } from './skills';
import { skillsExport } from './skills-export';
import { skillworldGenerate } from './skillworld';
import {
  trajectoriesExport,
  trajectoriesImport,
  trajectoriesList,
  trajectoriesRate,
  trajectoriesShow,
} from './trajectories';
import { testsSet, testsShow, verifyCommand } from './verify';

export const COMMANDS: readonly Command[] = [
  importCommand,
  skillsList,
  skillsShow,
  skillsCreate,
  skillsExport,
  generateCommand,
  compileCommand,
  compareCommand,
  evalCommand,
  skillworldGenerate,
  bundleCreate,
  adaptersList,
  adaptersShow,
  adaptersExport,
  adaptersImport,
  mergeCommand,
  emaUpdate,
  emaHistory,
  emaRollback,
  testsShow,
  testsSet,
  verifyCommand,
  evolveCommand,
  continualRun,
  trajectoriesList,
  trajectoriesShow,
  trajectoriesRate,
  trajectoriesExport,
  trajectoriesImport,
  settingsShow,
  settingsSet,
  doctorCommand,
  serveCommand,
];
