// Runs one real import per message (createStudio + import.run on its own connection) and answers
// with the result or the error message, so the parent can run two imports at the same moment.
import { parentPort } from 'node:worker_threads';
import { studioContract } from '../../../common/api/contract';
import { createStudio } from '../../../main/api/root';
import { directClient } from '../../../main/api/transports/direct';

export interface ImportJob {
  dataDir: string;
  source: string;
}
export type ImportAnswer = { ok: true; imported: number } | { ok: false; error: string };

parentPort!.on('message', (job: ImportJob) => {
  void run(job).then((answer) => parentPort!.postMessage(answer));
});
parentPort!.postMessage('ready');

async function run({ dataDir, source }: ImportJob): Promise<ImportAnswer> {
  try {
    const studio = createStudio({ dataDir, defaultBundleDir: null });
    try {
      const r = await directClient(studioContract, studio.dispatcher).import.run({ source }).result;
      return { ok: true, imported: r.imported };
    } finally {
      await studio.dispose();
    }
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}
