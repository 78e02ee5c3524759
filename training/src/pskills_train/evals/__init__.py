"""Evaluation of compiled skills against in-context skills (docs/design.md); `python -m pskills_train.evals`.

Modules, each importing only those above it: metrics, tasks, adapters, score, conditions, report,
diversity, retrieval (what distill/ may import: it reads score, tasks, conditions); then leaks, distilled
(which imports distill/), core (the loop and its Settings), merging, the suites run (skills) and
sw_suite (SkillWorld), and cli last. This file imports nothing, so that importing evals.score from
distill/ does not load the suites that import distill/.
"""
