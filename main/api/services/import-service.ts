// Imports a source (npm spec, folder, .tgz): collect and filter first, then one transaction,
// so a failed or cancelled import leaves nothing behind.
import type { ImportProgress, ImportResult } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
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
    const { imported, unchanged } = this.repo.importBatch(input.source, versions, {
      skipped,
      // Runs inside the transaction: a cancel here rolls the whole import back.
      onProgress: (done, total) => {
        if (ctx.signal.aborted)
          throw new StudioError('cancelled', `import of ${input.source} cancelled; nothing written`);
        if (done % 200 === 0) ctx.emit({ phase: 'write', done, total });
      },
    });
    ctx.emit({ phase: 'done', done: versions.length, total: versions.length });
    return { source: input.source, imported, unchanged, skipped };
  }
}
