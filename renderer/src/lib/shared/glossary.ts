// One line of help per term of art the pages show, in words a skill author knows. The formulas are
// those of ema.update in docs/api.md (the blend, then a truncated SVD) and PEFT's LoRA scale.

export const GLOSSARY = {
  beta:
    'β, the blend weight of the new lesson: the global adapter becomes (1 − β) × itself + β × the new adapter. ' +
    'Small β (0.1) keeps most of what it knew; 1 replaces it. The first version is the adapter itself (β = 1).',
  rankBudget:
    'Rank budget, the size of the merged adapter: its rank after the update, cut to the strongest directions (SVD). ' +
    'More keeps more detail and costs more memory; empty keeps the current size.',
  rankAlpha:
    'Rank: how many independent directions the adapter adds to each weight matrix (its size). ' +
    'α: its strength; the change is multiplied by α / rank (the scale).',
  scale:
    'Scale = α / rank: how strongly the adapter’s change (ΔW = B·A) is added to the base weights. 1 applies it as made.',
  encoder:
    'How the skill became an adapter: the hypernetwork (perceiver or t2l) read the skill in chunks that fit the ' +
    'encoder, made one adapter per chunk, and took their mean.',
  mergeRank:
    'Rank of the merged adapter: svd keeps this many of the sum’s strongest directions. ' +
    'More keeps more of the parts and costs more memory; the preview shows how much is kept.',
  mergeRehearse:
    'Rehearse: after the merge, this many distillation steps in which the merged adapter practises every picked ' +
    'skill, each answered with that skill in context, so the skills stop stepping on each other. It keeps the ' +
    'adapter at one adapter’s size and takes seconds to a minute; about 100 steps suit three skills. ' +
    'Every pick must come from a skill.',
  mergeCat:
    'cat: the exact weighted sum of the adapters, kept whole by stacking them (its rank is the sum of theirs). ' +
    'Use it by default: nothing is lost, at the cost of a bigger adapter.',
  mergeSvd:
    'svd: the same exact sum, then cut to the rank you give, keeping its strongest directions. ' +
    'Use it when the merged adapter must stay small; the preview shows how much is kept.',
  mergeLinear:
    'linear: adds the adapters’ A and B factors separately, which mixes in cross terms that were in neither. ' +
    'A baseline to compare against, not for real merges; equal ranks only.',
  bundle:
    'Bundle: one model packed for the studio (its weights, tokenizer and, when it has one, the hypernetwork). ' +
    'Skills are compiled for the bundle that is loaded.',
  hypernetwork:
    'Hypernetwork: a small network that reads a skill and writes its adapter in one pass (Instant), in milliseconds.',
  distilled:
    'Distilled: the adapter is trained for a few seconds so that the model without the skill answers as it does ' +
    'with the skill in its prompt.',
  teacher:
    'Teacher pass: the model answers each practice question with the skill in its prompt; training then aims at ' +
    'those answers.',
  loss:
    'Loss: how far the model with the adapter is from its answers with the skill in context (KL divergence). ' +
    'Lower is closer; it should fall as the steps go.',
  greedy:
    'Greedy: every column takes the most likely next token each time, in one batch, so the answers differ only by ' +
    'where the skill is.',
  truncated: 'Cut to fit: the skill was longer than the model’s context, so only its start was put in the prompt.',
  passRate:
    'Pass rate: the share of tests whose answer passes its checker. Compare it with the rate in context, the best ' +
    'the model does with the skill in its prompt.',
} as const;

export type GlossaryTerm = keyof typeof GLOSSARY;
