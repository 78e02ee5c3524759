// Imports a source (npm spec, folder, .tgz): collect and filter first, then one transaction,
// so a failed or cancelled import leaves nothing behind.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  MAX_UPLOAD_BYTES,
  type ImportProgress,
  type ImportResult,
  type ImportUploadInput,
} from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import { makeDirs } from '../../files/make-dirs';
import { collectImport } from '../../skills/importer';
import type { SkillsRepo } from '../../store/skills-repo';

export class ImportService {
  constructor(
    private readonly repo: SkillsRepo,
    private readonly cacheDir: string,
  ) {}

  async run(
    input: { source: string },
    ctx: { emit(p: ImportProgress): void; signal: AbortSignal },
  ): Promise<ImportResult> {
    const { versions, skipped } = await collectImport(input.source, {
      cacheDir: this.cacheDir,
      signal: ctx.signal,
      onProgress: (p) => ctx.emit(p),
      isKnownBody: (hash, name) => this.repo.hasBodyElsewhere(hash, name),
    });
    if (ctx.signal.aborted) throw new StudioError('cancelled', `import of ${input.source} cancelled; nothing written`);
    ctx.emit({ phase: 'write', done: 0, total: versions.length });
    const { imported, unchanged, skills } = this.repo.importBatch(input.source, versions, {
      skipped,
      // Runs inside the transaction: a cancel here rolls the whole import back.
      onProgress: (done, total) => {
        if (ctx.signal.aborted)
          throw new StudioError('cancelled', `import of ${input.source} cancelled; nothing written`);
        if (done % 200 === 0) ctx.emit({ phase: 'write', done, total });
      },
    });
    ctx.emit({ phase: 'done', done: versions.length, total: versions.length });
    return {
      source: input.source,
      imported,
      unchanged,
      skipped,
      skills: skills.map((k) => ({ name: k.name, version: k.version, status: k.created ? 'imported' : 'unchanged' })),
    };
  }

  /**
   * A .tgz sent as bytes: written (temp file, then rename) to cache/uploads/<sha256 prefix>-<name>,
   * where it stays, so the imported skills' provenance names a file that exists; then imported as run.
   */
  async upload(
    input: ImportUploadInput,
    ctx: { emit(p: ImportProgress): void; signal: AbortSignal },
  ): Promise<ImportResult> {
    const name = basename(input.fileName);
    const bytes = Buffer.from(input.data, 'base64');
    if (bytes.length > MAX_UPLOAD_BYTES)
      throw new StudioError('invalid_input', `${name} is over 1.25 MiB: import it by its path instead`);
    // gzip's magic number: refuse a renamed text file before it reaches the tar parser.
    if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b)
      throw new StudioError('import_failed', `${name} is not a gzip archive (a .tgz starts with the bytes 1f 8b)`);
    const dir = join(this.cacheDir, 'uploads');
    await makeDirs(dir);
    const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
    const file = join(dir, `${hash}-${name}`);
    // An earlier upload of the same bytes may be named by skills' provenance: that file is never removed.
    const known = existsSync(file);
    const part = `${file}.${randomBytes(4).toString('hex')}.part`;
    try {
      await writeFile(part, bytes);
      await rename(part, file);
    } finally {
      await rm(part, { force: true });
    }
    // A rejected, failed or cancelled upload, or one that stored nothing, leaves nothing in cache/uploads.
    let result: ImportResult;
    try {
      result = await this.run({ source: file }, ctx);
    } catch (err) {
      if (!known) await rm(file, { force: true });
      throw err;
    }
    if (!known && result.imported === 0 && result.unchanged === 0) await rm(file, { force: true });
    return result;
  }
}
