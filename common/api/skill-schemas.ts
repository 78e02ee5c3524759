// DTOs for skills: what the store returns and the UI shows.
import { z } from 'zod';

/** Longest name the studio keeps (skill names; bundle ids): enough for every registry name we have seen. */
export const NAME_MAX_CHARS = 128;

// C0, DEL and C1 controls (\p{Cc}) and the bidi controls that reorder what a terminal or a list shows
// (LRM/RLM/ALM, embeddings and overrides U+202A–202E, isolates U+2066–2069).
const NAME_CONTROL = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
// Characters that show as nothing, so two names that look the same differ (docs/security.md "Names"):
// format characters (\p{Cf}: U+00AD soft hyphen, U+200B–200D zero widths, U+2060–2064, U+FEFF BOM, …),
// the line and paragraph separators U+2028/2029, and lone surrogates (\p{Cs}: not text at all).
const NAME_INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `name` cannot be a name, or null. Never quotes the name: it may be what does the harm. */
export function nameProblem(name: string): string | null {
  const bad = NAME_CONTROL.exec(name);
  if (bad) return `has the control character ${codePoint(bad[0])} at position ${bad.index + 1}`;
  const hidden = NAME_INVISIBLE.exec(name);
  if (hidden) return `has the invisible character ${codePoint(hidden[0])} at position ${hidden.index + 1}`;
  const chars = [...name].length;
  if (chars > NAME_MAX_CHARS) return `has ${chars.toLocaleString('en-US')} characters (at most ${NAME_MAX_CHARS})`;
  return null;
}

/** Why `name` cannot be a new skill's name (create, save under a new name, import): nameProblem's
 *  reasons, and '@', which separates a name from its version everywhere a skill is named (`compile
 *  pdf@2`), so "amb@1" would be read as version 1 of "amb". Names stored before are still reached. */
export function newSkillNameProblem(name: string): string | null {
  const why = nameProblem(name);
  if (why) return why;
  const at = [...name].indexOf('@');
  return at < 0 ? null : `has '@' at position ${at + 1}, the separator of a version (name@2 is version 2 of name)`;
}

/** A skill's name as the store keeps it: what registries ship ("pdf", "Git Commit Helper",
 *  "sw/handoff"), so the API reaches every imported skill; control characters, bidi controls,
 *  surrounding whitespace and more than NAME_MAX_CHARS characters are refused. The validator warns
 *  about names outside the Agent Skills form. */
export const SkillName = z
  .string()
  .min(1, 'must not be empty')
  .regex(/^\S(?:.*\S)?$/su, 'no leading or trailing whitespace')
  .superRefine((name, ctx) => {
    const why = nameProblem(name);
    if (why) ctx.addIssue({ code: 'custom', message: `name ${why}` });
  });

/** The name of a skill being created: SkillName without '@' (newSkillNameProblem). */
export const NewSkillName = SkillName.superRefine((name, ctx) => {
  if (!nameProblem(name) && name.includes('@'))
    ctx.addIssue({ code: 'custom', message: `name ${newSkillNameProblem(name)!}` });
});

export const Provenance = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('manual') }),
  /** Version 1 of a skill written in the studio: its New skill template (main/skills/template.ts). */
  z.object({ kind: z.literal('template') }),
  z.object({
    kind: z.literal('npm'),
    package: z.string(),
    version: z.string(),
    license: z.string().nullable(),
    integrity: z.string().nullable(),
    path: z.string(), // path of SKILL.md inside the package
  }),
  z.object({ kind: z.literal('folder'), root: z.string(), path: z.string() }),
  /** Made by an evolve run: the run, the candidate, its score, the version evolved. */
  z.object({
    kind: z.literal('evolve'),
    run: z.string(),
    candidate: z.number().int().positive(),
    score: z.number().min(0).max(1),
    from: z.number().int().positive(),
  }),
  z.object({
    kind: z.literal('tgz'),
    file: z.string(),
    package: z.string().nullable(),
    version: z.string().nullable(),
    license: z.string().nullable(),
    path: z.string(),
  }),
  // Summarised from verified trajectories by the continual loop: its run, its
  // episode, the SkillWorld world whose tasks it came from, the trajectory uids and the summariser.
  z.object({
    kind: z.literal('lesson'),
    run: z.string(),
    episode: z.number().int().positive(),
    world: z.string(),
    trajectories: z.array(z.string()),
    summariser: z.string(),
    /** Set when the lesson was adopted into the Library from its run's workspace (docs/store.md
     *  "Run workspaces"): the lesson's name@version there; the trajectories stay in the workspace. */
    adoptedFrom: z.string().optional(),
  }),
]);
export type Provenance = z.infer<typeof Provenance>;

export const Diagnostic = z.object({
  severity: z.enum(['error', 'warning']),
  code: z.string(),
  message: z.string(),
  line: z.number().int().positive(), // 1-based line in the SKILL.md file
  column: z.number().int().positive().optional(),
  endLine: z.number().int().positive().optional(),
  field: z.string().optional(),
});
export type Diagnostic = z.infer<typeof Diagnostic>;

export interface Section {
  heading: string;
  level: number; // 1..6
  startLine: number; // line of the heading, 1-based
  endLine: number; // last line before the next heading of the same or a higher level
  children: Section[];
}
export const Section: z.ZodType<Section> = z.lazy(() =>
  z.object({
    heading: z.string(),
    level: z.number().int().min(1).max(6),
    startLine: z.number().int().positive(),
    endLine: z.number().int().positive(),
    children: z.array(Section),
  }),
);

/** A string-keyed mapping, passed through as is: z.record copies by assignment, which would turn a
 *  "__proto__" key (valid YAML) into the copy's prototype and drop it. */
const PlainRecord = z.custom<Record<string, unknown>>(
  (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  'expected a mapping',
);

export const Frontmatter = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  license: z.string().optional(),
  compatibility: z.string().optional(),
  metadata: PlainRecord.optional(),
  allowedTools: z.array(z.string()).optional(),
  /** Fields the Agent Skills spec does not name, kept as written. */
  extra: PlainRecord,
});
export type Frontmatter = z.infer<typeof Frontmatter>;

export const ParsedSkill = z.object({
  frontmatter: Frontmatter,
  /** 1-based line where the markdown body starts (after the closing ---). */
  bodyStartLine: z.number().int().positive(),
  body: z.string(),
  sections: z.array(Section),
  diagnostics: z.array(Diagnostic),
});
export type ParsedSkill = z.infer<typeof ParsedSkill>;

export const SkillSummary = z.object({
  name: z.string(),
  description: z.string(),
  package: z.string().nullable(),
  versions: z.number().int().nonnegative(),
  latestVersion: z.number().int().positive(),
  updatedAt: z.string(),
});
export type SkillSummary = z.infer<typeof SkillSummary>;

export const VersionMeta = z.object({
  version: z.number().int().positive(), // 1, 2, 3 … per skill
  sha256: z.string(),
  parentVersion: z.number().int().positive().nullable(),
  provenance: Provenance,
  createdAt: z.string(),
});
export type VersionMeta = z.infer<typeof VersionMeta>;

export const SkillDetail = z.object({
  name: z.string(),
  description: z.string(),
  package: z.string().nullable(),
  version: VersionMeta,
  content: z.string(),
  parsed: ParsedSkill,
  history: z.array(VersionMeta),
});
export type SkillDetail = z.infer<typeof SkillDetail>;

export const SkipRecord = z.object({ path: z.string(), reason: z.string() });
export type SkipRecord = z.infer<typeof SkipRecord>;

export const ImportResult = z.object({
  source: z.string(),
  imported: z.number().int().nonnegative(),
  unchanged: z.number().int().nonnegative(),
  skipped: z.array(SkipRecord),
  /** Each skill the import wrote (a new version) or found as it was, with that version. */
  skills: z
    .array(
      z.object({
        name: z.string(),
        version: z.number().int().positive(),
        status: z.enum(['imported', 'unchanged']),
      }),
    )
    .optional(),
});
export type ImportResult = z.infer<typeof ImportResult>;

export const ImportProgress = z.object({
  phase: z.enum(['fetch', 'scan', 'parse', 'write', 'done']),
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  path: z.string().optional(),
  skipped: SkipRecord.optional(),
});
export type ImportProgress = z.infer<typeof ImportProgress>;

/** Largest .tgz import.upload takes: its base64 (4/3 of it) fits one 2 MiB stream message. */
export const MAX_UPLOAD_BYTES = 1.25 * 1024 * 1024;

/** A .tgz sent as bytes: what a browser tab has for a dropped file (no path). */
export const ImportUploadInput = z
  .object({
    fileName: z
      .string()
      .max(200)
      .regex(/^[^/\\\0]+\.(tgz|tar\.gz)$/i, 'must be a file name ending in .tgz or .tar.gz, without folders'),
    data: z.base64().max(Math.ceil(MAX_UPLOAD_BYTES / 3) * 4, 'the archive is over 1.25 MiB: import it by its path'),
  })
  .strict();
export type ImportUploadInput = z.infer<typeof ImportUploadInput>;

/** `name@N` → { name, version: N }; any other text is all name (an "@" not followed by digits to the
 * end belongs to it). The one rule for the CLI's `name@N` and the endpoint's `base:name@N`; callers
 * refuse version 0. */
export function splitSkillRef(ref: string): { name: string; version?: number } {
  const m = /^(.+)@(\d+)$/.exec(ref);
  return m ? { name: m[1]!, version: Number(m[2]) } : { name: ref };
}
