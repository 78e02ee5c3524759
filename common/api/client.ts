// Turns a Link (one transport's way to send a call or a stream) into the typed StudioApi.
import { ErrorEnvelope, StudioError } from '../errors';
import type { BridgeOf, BridgeOutcome, ClientOf, Contract } from './define';
import { entries } from './define';
import type { StreamHandle } from './define';

export interface Link {
  /** Resolves with the output or rejects with a StudioError. */
  call(method: string, input: unknown): Promise<unknown>;
  stream(method: string, input: unknown, onEvent: (event: unknown) => void): StreamHandle<unknown>;
}

export function createClient<C extends Contract>(contract: C, link: Link): ClientOf<C> {
  const api: Record<string, Record<string, unknown>> = {};
  for (const [wire, def] of entries(contract)) {
    const [ns, name] = wire.split('.') as [string, string];
    const group = (api[ns] ??= {});
    group[name] =
      def.kind === 'method'
        ? (input: unknown) => link.call(wire, input)
        : (input: unknown, onEvent?: (e: unknown) => void) => link.stream(wire, input, (e) => onEvent?.(e));
  }
  return api as ClientOf<C>;
}

/** A Link over the preload bridge (window.studio in Electron). */
export function bridgeLink<C extends Contract>(bridge: BridgeOf<C>): Link {
  const fn = (wire: string) => {
    const [ns, name] = wire.split('.') as [string, string];
    const f = (bridge as unknown as Record<string, Record<string, unknown>>)[ns]?.[name];
    if (typeof f !== 'function') throw new StudioError('not_found', `unknown method "${wire}"`);
    return f as (...args: unknown[]) => unknown;
  };
  const unwrap = (o: BridgeOutcome): unknown => {
    if (o.ok) return o.value;
    throw StudioError.from(ErrorEnvelope.parse(o.error));
  };
  return {
    call: async (wire, input) => unwrap(await (fn(wire)(input) as Promise<BridgeOutcome>)),
    stream(wire, input, onEvent) {
      const h = fn(wire)(input, onEvent) as { result: Promise<BridgeOutcome>; cancel(): void };
      return { result: h.result.then(unwrap), cancel: () => h.cancel() };
    },
  };
}
