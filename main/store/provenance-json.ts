// Provenance crosses the database boundary as JSON; it is checked both ways so a row written by an
// older build or edited by hand fails loudly where it is read, not deep in the UI.
import { Provenance } from '../../common/api/skill-schemas';
import { StudioError } from '../../common/errors';
import type { z } from 'zod';

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'bad value';
  return issue.path.length ? `at "${issue.path.join('.')}": ${issue.message}` : issue.message;
}

/** `where` names the row for the error message, e.g. `skill "pdf"`. */
export function provenanceToJson(value: unknown, where: string): string {
  const parsed = Provenance.safeParse(value);
  if (!parsed.success) {
    throw new StudioError(
      'invalid_input',
      `${where}: invalid provenance ${firstIssue(parsed.error)}`,
      parsed.error.issues,
    );
  }
  return JSON.stringify(parsed.data);
}

export function provenanceFromJson(json: string, where: string): Provenance {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new StudioError('internal', `${where}: stored provenance is not JSON: ${(err as Error).message}`);
  }
  const parsed = Provenance.safeParse(raw);
  if (!parsed.success) {
    throw new StudioError(
      'internal',
      `${where}: stored provenance is invalid ${firstIssue(parsed.error)}`,
      parsed.error.issues,
    );
  }
  return parsed.data;
}

/** The npm package a provenance names, or undefined when it names none. */
export function packageOf(provenance: Provenance): string | undefined {
  if (provenance.kind === 'npm') return provenance.package;
  if (provenance.kind === 'tgz') return provenance.package ?? undefined;
  return undefined;
}
