// The adapters the engine worker keeps, by id, most recently used last. The client keeps the same
// table of ids and applies the same steps in the same order (the worker takes a request's adapters as
// the message arrives), so it knows which adapters the worker holds and sends only the others.
export const ADAPTERS_KEPT = 16;

export class AdapterTable<T> {
  private readonly items = new Map<number, T>();

  /** The kept value, made the newest; undefined when not kept. */
  use(id: number): T | undefined {
    const v = this.items.get(id);
    if (v === undefined) return undefined;
    this.items.delete(id);
    this.items.set(id, v);
    return v;
  }

  /** Keeps `value` as the newest, dropping the oldest past ADAPTERS_KEPT. */
  put(id: number, value: T): void {
    this.items.delete(id);
    this.items.set(id, value);
    if (this.items.size > ADAPTERS_KEPT) this.items.delete(this.items.keys().next().value!);
  }

  clear(): void {
    this.items.clear();
  }
}
