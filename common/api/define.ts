// Building blocks of the contract: a request/response method or an event stream, each with
// zod schemas for what goes in and what comes out.
import type { z } from 'zod';

export interface MethodDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  kind: 'method';
  input: I;
  output: O;
}

export interface StreamDef<
  I extends z.ZodType = z.ZodType,
  E extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> {
  kind: 'stream';
  input: I;
  event: E;
  result: R;
}

export type Def = MethodDef | StreamDef;
export type Contract = Record<string, Record<string, Def>>;

export const method = <I extends z.ZodType, O extends z.ZodType>(input: I, output: O): MethodDef<I, O> => ({
  kind: 'method',
  input,
  output,
});

export const stream = <I extends z.ZodType, E extends z.ZodType, R extends z.ZodType>(
  input: I,
  event: E,
  result: R,
): StreamDef<I, E, R> => ({ kind: 'stream', input, event, result });

/** A running stream: its final result, and a way to stop it early. */
export interface StreamHandle<R> {
  result: Promise<R>;
  cancel(): void;
}

type ClientFn<D> =
  D extends MethodDef<infer I, infer O>
    ? (input: z.input<I>) => Promise<z.output<O>>
    : D extends StreamDef<infer I, infer E, infer R>
      ? (input: z.input<I>, onEvent?: (event: z.output<E>) => void) => StreamHandle<z.output<R>>
      : never;

export type ClientOf<C extends Contract> = { [N in keyof C]: { [M in keyof C[N]]: ClientFn<C[N][M]> } };

export interface StreamContext<E> {
  emit(event: E): void;
  signal: AbortSignal;
}

type HandlerFn<D> =
  D extends MethodDef<infer I, infer O>
    ? (input: z.output<I>) => Promise<z.input<O>> | z.input<O>
    : D extends StreamDef<infer I, infer E, infer R>
      ? (input: z.output<I>, ctx: StreamContext<z.input<E>>) => Promise<z.input<R>>
      : never;

export type HandlersOf<C extends Contract> = { [N in keyof C]: { [M in keyof C[N]]: HandlerFn<C[N][M]> } };

/** Every wire name (`namespace.method`) with its definition, in contract order. */
export function entries(contract: Contract): Array<[string, Def]> {
  return Object.entries(contract).flatMap(([ns, defs]) =>
    Object.entries(defs).map(([name, def]): [string, Def] => [`${ns}.${name}`, def]),
  );
}

/**
 * What Electron's preload exposes as window.studio: the same named functions as the client,
 * but resolving to outcomes, because errors lose their fields when they cross contextBridge.
 */
export type BridgeOutcome =
  { ok: true; value: unknown } | { ok: false; error: { code: string; message: string; details?: unknown } };
type BridgeFn<D> = D extends MethodDef
  ? (input: unknown) => Promise<BridgeOutcome>
  : D extends StreamDef
    ? (input: unknown, onEvent: (event: unknown) => void) => { result: Promise<BridgeOutcome>; cancel(): void }
    : never;
export type BridgeOf<C extends Contract> = { [N in keyof C]: { [M in keyof C[N]]: BridgeFn<C[N][M]> } };
