// The engine's public surface: load a bundle, generate from it (one row or a batch of rows, each
// with its own adapter). Only ort.ts touches onnxruntime-node; in the studio only the engine worker
// loads a Bundle with sessions, and the main thread holds a BundleInfo (engine-client.ts).
export { foldAdapter, engineAdapter, checkAdapterFits, type EngineAdapter } from './adapter';
export { Bundle, loadBundle, type BundleInfo, type LoadOptions, type ProviderInfo } from './bundle';
export {
  chunkSpans,
  combineChunks,
  compileSkill,
  requireHypernet,
  skillIds,
  type CompiledSkill,
  type CompileOptions,
  type CompileProgress,
} from './compile';
export { ChatTemplate, type ChatMessage } from './chat';
export { EngineError } from './errors';
export {
  generate,
  generateAll,
  generateBatch,
  type GenerateOptions,
  type GenerateRequest,
  type RowResult,
  type RowTokenEvent,
  type TokenEvent,
} from './generate';
export type { SamplingOptions } from './logits-processors';
export { Hypernetwork, type ChunkFactors } from './hypernet';
export { FORMAT_V1, FORMAT_V2, parseManifest, type BundleManifest } from './manifest';
export { checkPromptBytes, headForContext, promptByteLimit } from './prompt-bound';
export type { Provider } from './ort';
export type { FinishReason } from './stopping';
export type { BundleTokenizer } from './tokenizer';
