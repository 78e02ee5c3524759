"""Evaluation of compiled skills against in-context skills (docs/design.md); `python -m pskills_train.evals`.

Built on scoring/ (tasks, prompts, scoring, metrics) and distill/: adapters and conditions, report,
diversity, retrieval, leaks, distilled (the distilled conditions), core (the loop and its Settings),
merging, the suites run (skills) and sw_suite (SkillWorld), and cli last.
"""
