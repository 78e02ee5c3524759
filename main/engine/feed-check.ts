// Feeds are checked against the graph's input metadata before ORT sees them, so a wrong feed fails
// with the input and dimension named instead of ORT's "Unexpected input data type" (transformers.js
// `validateInputs` in src/models/session.js does the same).

/** What a session says about one input or output: dims are sizes or symbolic names. */
export interface TensorSpec {
  readonly name: string;
  readonly type: string;
  readonly dims: readonly (number | string)[];
}

export interface FeedInfo {
  readonly type: string;
  readonly dims: readonly number[];
}

export class FeedError extends Error {
  constructor(
    message: string,
    readonly input: string,
    readonly feeds: string[],
  ) {
    super(message);
    this.name = 'FeedError';
  }
}

/** Every feed, inherited ones included (a step's feeds sit on an object of the constant ones: lm.ts). */
export function describeFeeds(feeds: Readonly<Record<string, FeedInfo>>): string[] {
  const out: string[] = [];
  for (const name in feeds) out.push(`${name}: ${feeds[name]!.type} [${feeds[name]!.dims.join(', ')}]`);
  return out;
}

const shape = (dims: readonly (number | string)[]) => `[${dims.join(', ')}]`;

/** Input names per spec list, built once (a session's specs never change). */
const names = new WeakMap<readonly TensorSpec[], ReadonlySet<string>>();

/** Throws FeedError for the first missing, unexpected, mistyped or mis-shaped feed. Runs before every
 * forward (a decode step of a 30-layer model with LoRA groups has ~360 feeds): plain loops, no copies. */
export function checkFeeds(specs: readonly TensorSpec[], feeds: Readonly<Record<string, FeedInfo>>): void {
  const fail = (input: string, message: string): never => {
    throw new FeedError(message, input, describeFeeds(feeds));
  };
  let expected = names.get(specs);
  if (!expected) names.set(specs, (expected = new Set(specs.map((s) => s.name))));
  for (const name in feeds) if (!expected.has(name)) fail(name, `feed '${name}' is not an input of this graph`);
  const symbols = new Map<string, { size: number; input: string }>();
  for (const spec of specs) {
    const feed = feeds[spec.name];
    if (feed === undefined)
      return fail(spec.name, `input '${spec.name}' is missing (graph wants ${spec.type} ${shape(spec.dims)})`);
    if (feed.type !== spec.type)
      fail(spec.name, `input '${spec.name}': dtype ${feed.type}, the graph wants ${spec.type}`);
    if (feed.dims.length !== spec.dims.length) {
      fail(
        spec.name,
        `input '${spec.name}': rank ${feed.dims.length} ${shape(feed.dims)}, the graph wants rank ${spec.dims.length} ${shape(spec.dims)}`,
      );
    }
    for (let axis = 0; axis < spec.dims.length; axis++) {
      const want = spec.dims[axis]!;
      const got = feed.dims[axis]!;
      if (typeof want === 'number') {
        if (want >= 0 && got !== want)
          fail(
            spec.name,
            `input '${spec.name}' dimension ${axis}: ${got}, the graph wants ${want} ${shape(spec.dims)}`,
          );
        continue;
      }
      if (want === '') continue; // unnamed free dimension
      const seen = symbols.get(want);
      if (seen === undefined) symbols.set(want, { size: got, input: spec.name });
      else if (seen.size !== got) {
        fail(
          spec.name,
          `input '${spec.name}' dimension ${axis} (${want}): ${got}, but '${seen.input}' gave ${want} = ${seen.size}`,
        );
      }
    }
  }
}
