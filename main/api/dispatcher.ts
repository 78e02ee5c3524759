// Parses every payload against the contract before a handler sees it, and turns every failure
// into an ErrorEnvelope. All transports go through here.
import { type Def, type Contract, type HandlersOf, entries } from '../../common/api/define';
import { StudioError, toEnvelope } from '../../common/errors';
import type { CallOutcome } from '../../common/api/wire';
import type { z } from 'zod';

type AnyHandler = (input: unknown, ctx?: unknown) => unknown;

function invalid(wire: string, what: string, error: z.ZodError): StudioError {
  const issues = error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = issues[0];
  const where = first && first.path ? ` at "${first.path}"` : '';
  return new StudioError('invalid_input', `${wire}: invalid ${what}${where}: ${first?.message ?? 'bad value'}`, {
    issues,
  });
}

export class Dispatcher<C extends Contract> {
  private readonly table = new Map<string, { def: Def; fn: AnyHandler }>();

  constructor(contract: C, handlers: HandlersOf<C>) {
    for (const [wire, def] of entries(contract)) {
      const [ns, name] = wire.split('.') as [string, string];
      const fn = (handlers as Record<string, Record<string, AnyHandler>>)[ns]?.[name];
      if (typeof fn !== 'function') throw new Error(`no handler for ${wire}`);
      this.table.set(wire, { def, fn });
    }
  }

  has(wire: string, kind: Def['kind']): boolean {
    return this.table.get(wire)?.def.kind === kind;
  }

  private lookup(wire: string, kind: Def['kind']) {
    const entry = this.table.get(wire);
    if (!entry || entry.def.kind !== kind) throw new StudioError('not_found', `unknown ${kind} "${wire}"`);
    return entry;
  }

  /** Runs a request/response method; throws StudioError. */
  async call(wire: string, rawInput: unknown): Promise<unknown> {
    const { def, fn } = this.lookup(wire, 'method');
    const parsed = def.input.safeParse(rawInput ?? {});
    if (!parsed.success) throw invalid(wire, 'input', parsed.error);
    const out = await fn(parsed.data);
    // Outputs are checked too: a service that breaks the contract is a bug we want to see.
    const checked = (def as Extract<Def, { kind: 'method' }>).output.safeParse(out);
    if (!checked.success)
      throw new StudioError('internal', `${wire}: handler returned invalid output`, checked.error.issues);
    return checked.data;
  }

  async callOutcome(wire: string, rawInput: unknown): Promise<CallOutcome> {
    try {
      return { ok: true, value: await this.call(wire, rawInput) };
    } catch (err) {
      return { ok: false, error: toEnvelope(err) };
    }
  }

  /** Runs a stream; events go to emit after validation; resolves with the result. */
  async stream(wire: string, rawInput: unknown, emit: (e: unknown) => void, signal: AbortSignal): Promise<unknown> {
    const { def, fn } = this.lookup(wire, 'stream');
    const sdef = def as Extract<Def, { kind: 'stream' }>;
    const parsed = sdef.input.safeParse(rawInput ?? {});
    if (!parsed.success) throw invalid(wire, 'input', parsed.error);
    const ctx = {
      signal,
      emit: (e: unknown) => {
        if (signal.aborted) return;
        emit(sdef.event.parse(e));
      },
    };
    const out = await fn(parsed.data, ctx);
    if (signal.aborted) throw new StudioError('cancelled', `${wire}: cancelled`);
    const checked = sdef.result.safeParse(out);
    if (!checked.success)
      throw new StudioError('internal', `${wire}: handler returned invalid result`, checked.error.issues);
    return checked.data;
  }
}
