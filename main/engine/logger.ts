// The engine's log: warnings (a provider fallback, a failed run with its feeds). Kept apart from ort.ts
// so the main thread can say the worker's lines without loading onnxruntime-node.
export type Logger = (message: string) => void;

export const defaultLogger: Logger = (message) => console.warn(`[engine] ${message}`);
