"""Scoring answers: a skill's tasks and their prompts (`tasks`), batched NLL and greedy decoding with
per-row adapters (`score`), and the answer metrics with the paired bootstrap (`metrics`).

Below `distill/`, whose teacher answers and scores practice with these, and `evals/`, whose conditions
and suites are built on them.
"""
