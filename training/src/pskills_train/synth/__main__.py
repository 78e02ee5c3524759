"""python -m pskills_train.synth --skills DIR_OR_SPLIT --out FILE.jsonl [--llm-base-url URL --llm-model M]

Without --llm-* flags the template synthesizer runs (offline). With them, the LLM synthesizer runs
instead and rejections are summarised on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from .llm import from_env
from .skill import load_skills
from .template import TemplateSynthesizer
from .trajectory import write_jsonl


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pskills_train.synth", description=__doc__.split("\n")[0])
    ap.add_argument("--skills", required=True, type=Path,
                    help="folder of SKILL.md files, or corpus split folder/.jsonl")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-skills", type=int)
    ap.add_argument("--llm-base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1")
    ap.add_argument("--llm-model")
    ap.add_argument("--llm-key-env", help="environment variable holding the API key")
    ap.add_argument("--llm-n", type=int, default=4, help="trajectories asked for per skill")
    a = ap.parse_args(argv)
    if bool(a.llm_base_url) != bool(a.llm_model):
        ap.error("--llm-base-url and --llm-model go together")

    skills = load_skills(a.skills)[:a.max_skills]
    synth = (from_env(a.llm_base_url, a.llm_model, a.llm_key_env, n=a.llm_n, seed=a.seed) if a.llm_base_url
             else TemplateSynthesizer(seed=a.seed))
    out = [t for s in skills for t in synth.synthesize(s)]
    n = write_jsonl(a.out, out)
    print(f"{synth.name}: {n} trajectories from {len(skills)} skills -> {a.out}")
    reasons = Counter(r.reason.split(":")[0] for _, rep in getattr(synth, "reports", []) for r in rep.rejections)
    for why, k in reasons.most_common():
        print(f"  rejected {k}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
