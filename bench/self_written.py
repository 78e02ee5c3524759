"""Python side of bench/self-written.ts: each skill's self-written practice as the eval writes it
(Teacher.write on the bundle, then the filter). Prints JSON: [{skill, prompts, replies, kept, dropped}].

    training/.venv/bin/python bench/self_written.py BUNDLE THREADS SKILL.md... [--before]

--before: as the eval wrote before the writer was shared with the studio (greedy, a prompt per heading).
"""

import json
import sys
from pathlib import Path

import torch
from pskills_train.distill import practice as P
from pskills_train.distill.teacher import Teacher
from pskills_train.distill_recipe import load_recipe
from pskills_train.model.backend import OrtBackend
from pskills_train.scoring.tasks import Prompter, trained_context
from pskills_train.synth.skill import skill_from_text
from tokenizers import Tokenizer

args = [a for a in sys.argv[1:] if a != "--before"]
before = "--before" in sys.argv
bundle, threads, paths = Path(args[0]), int(args[1]), args[2:]
torch.set_num_threads(threads)
m = json.loads((bundle / "bundle.json").read_text())
tok = Tokenizer.from_file(str(bundle / m["tokenizer"]["file"]))
chat = json.loads((bundle / m["tokenizer"]["config"]).read_text())["chat_template"]
rec = load_recipe().recipe
teacher = Teacher(
    OrtBackend(bundle, threads),
    Prompter(tok, chat, m["architecture"]["max_positions"]),
    set(m["special_tokens"]["stop"]),
    m["special_tokens"]["eos"],
    trained_context(m, None)[0],
    rec.top_k,
    rec.max_answer,
    rec.batch,
)
out = []
for p in paths:
    skill = skill_from_text(Path(p).read_text(encoding="utf-8"), p)
    if before:
        prompts = P.write_prompts([s.heading for s in skill.sections])
        replies = teacher.write(skill.text, prompts, sampling=None)
    else:
        prompts = P.write_prompts(P.write_headings(skill))
        replies = teacher.write(skill.text, prompts)
    kept, dropped = P.filter_written(replies, skill.text)
    out.append({"skill": skill.name, "prompts": prompts, "replies": replies, "kept": kept, "dropped": dropped})
print(json.dumps(out))
