"""SkillWorld: procedurally generated skills whose use is checkable (docs/skillworld.md).

    world = generate("test", n=100, seed=0)          # skills + tasks in memory
    world.write("out/")                              # skills/<name>/SKILL.md, tasks.jsonl, manifest.json
    world = load("out/")
    check(task.checker, answer) -> bool
"""

from .check import SpecError, check, normalize, parse_call
from .document import DEPTHS, LENGTH_BUCKETS
from .families import FAMILIES, TEST_ONLY_FAMILIES, TOOL_FAMILIES
from .lexicon import pool_of
from .world import SPLITS, SwSkill, Task, World, generate, load, write_world

__all__ = ["DEPTHS", "FAMILIES", "LENGTH_BUCKETS", "SPLITS", "SpecError", "SwSkill", "TEST_ONLY_FAMILIES",
           "TOOL_FAMILIES", "Task", "World", "check", "generate", "load", "normalize", "parse_call", "pool_of",
           "write_world"]
