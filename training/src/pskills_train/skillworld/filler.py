"""Filler: sections of real SKILL.md files that pad a generated skill to its token target.

Sources, first that applies:
- `--filler DIR` with DIR/skills_train/*.jsonl and DIR/skills_val/*.jsonl (a built corpus): the
  corpus split decides: skills_train is train filler, skills_val (held-out packages) is test filler;
- `--filler DIR` holding SKILL.md files (recursive): a file's package is its first folder under DIR;
  a package is held out when sha256("skillworld/filler-side:" + package)[0] % 4 == 0;
- no `--filler`: training/.cache/corpus when it is built, else tests/fixtures/skillworld/filler.
Train and val skills take filler from train packages only, test skills from held-out packages only.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tokenizers import Tokenizer

from ..data.config import REPO
from ..data.skill_md import parse_skill_md

DEFAULT_CORPUS = REPO / "training/.cache/corpus"
DEFAULT_FIXTURE = REPO / "tests/fixtures/skillworld/filler"
# Filler sections with these headings would read as a second copy of the generated rule sections.
RESERVED_HEADINGS = {"when to use", "rules", "tools", "steps", "examples", "pitfalls"}
MAX_BLOCK_TOKENS = 400
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


@dataclass
class Doc:
    package: str
    path: str
    text: str
    side: str  # "train" | "heldout"


@dataclass
class Section:
    doc: int
    heading: str | None  # normalised heading line ("## ..."); None for text before the first heading
    blocks: list[str]
    head_tokens: int = 0
    block_tokens: list[int] = field(default_factory=list)


def package_side(package: str) -> str:
    return "heldout" if hashlib.sha256(f"skillworld/filler-side:{package}".encode()).digest()[0] % 4 == 0 else "train"


def load_docs(source: Path | None) -> tuple[list[Doc], str]:
    """The filler documents and a description of where they came from."""
    if source is None:
        corpus = DEFAULT_CORPUS
        if (corpus / "skills_train").is_dir() and any((corpus / "skills_val").glob("*.jsonl")):
            return _corpus_docs(corpus), f"corpus:{corpus}"
        return _folder_docs(DEFAULT_FIXTURE), f"folder:{DEFAULT_FIXTURE}"
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"--filler {source}: no such folder")
    if (source / "skills_train").is_dir() and (source / "skills_val").is_dir():
        return _corpus_docs(source), f"corpus:{source}"
    return _folder_docs(source), f"folder:{source}"


def _corpus_docs(corpus: Path) -> list[Doc]:
    docs = []
    for split, side in (("skills_train", "train"), ("skills_val", "heldout")):
        for shard in sorted((corpus / split).glob("*.jsonl")):
            for line in shard.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                docs.append(Doc(rec["package"], rec["id"], rec["text"], side))
    return docs


def _folder_docs(root: Path) -> list[Doc]:
    docs = []
    for p in sorted(root.rglob("*")):
        if p.name.lower() != "skill.md" or not p.is_file():
            continue
        rel = p.relative_to(root)
        package = rel.parts[0] if len(rel.parts) > 1 else root.name
        docs.append(Doc(package, rel.as_posix(), p.read_text(encoding="utf-8"), package_side(package)))
    if not docs:
        raise FileNotFoundError(f"--filler {root}: no SKILL.md files under it")
    return docs


def sections_of(text: str, doc: int) -> list[Section]:
    """Body sections (frontmatter dropped) split into blocks: paragraphs, a fenced block whole."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    parsed = parse_skill_md(text)
    body = re.sub(r"<!--.*?-->", "", parsed.body if not parsed.error else text, flags=re.S)
    out = [Section(doc, None, [])]
    block: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if block and "".join(block).strip():
            out[-1].blocks.append("\n".join(block).strip("\n"))
        block.clear()

    for line in body.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            block.append(line)
            if m and m.group(1).startswith(fence):
                fence = None
                flush()
            continue
        if m:
            flush()
            fence = m.group(1)[0] * 3
            block.append(line)
            continue
        h = _ATX.match(line)
        if h and h.group(2).strip():
            flush()
            level = "##" if len(h.group(1)) <= 2 else "###"
            out.append(Section(doc, f"{level} {h.group(2).strip()}", []))
        elif not line.strip():
            flush()
        else:
            block.append(line)
    if fence is None:
        flush()  # an unclosed fence is dropped: it would swallow what follows it
    return [s for s in out if s.blocks]


def _heading_key(heading: str | None) -> str:
    return re.sub(r"[^a-z ]", "", (heading or "").lower()).strip()


class Filler:
    """Sections of one filler source, tokenized once, drawn per skill by a seeded rng."""

    def __init__(self, docs: list[Doc], tokenizer: Tokenizer, source: str):
        self.docs, self.tok, self.source = docs, tokenizer, source
        # Text before a document's first heading is left out: placed after the rule block it would
        # read as part of the rule's last section.
        sections = [s for i, d in enumerate(docs) for s in sections_of(d.text, i)
                    if s.heading and _heading_key(s.heading) not in RESERVED_HEADINGS]
        texts = [s.heading or "" for s in sections] + [b for s in sections for b in s.blocks]
        counts = [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]
        heads, blocks = counts[:len(sections)], iter(counts[len(sections):])
        for s, h in zip(sections, heads, strict=True):
            s.head_tokens = h
            s.block_tokens = [next(blocks) for _ in s.blocks]
        self.sides = {side: [s for s in sections if docs[s.doc].side == side] for side in ("train", "heldout")}
        for side, secs in self.sides.items():
            if not secs:
                raise ValueError(f"filler {source}: no {side} packages (see skillworld/filler.py for the split rule)")

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Lowercase ASCII words of every document, on both sides."""
        return frozenset(w.lower() for d in self.docs for w in re.findall(r"[A-Za-z]+", d.text))

    def digest(self) -> str:
        h = hashlib.sha256()
        for d in self.docs:
            h.update(f"{d.side}\x1f{d.path}\x1f{hashlib.sha256(d.text.encode()).hexdigest()}\n".encode())
        return h.hexdigest()

    def compose(self, rng: random.Random, side: str, budget: int,
                slack: int = 0) -> tuple[list[str], list[int], list[str]]:
        """Filler sections (markdown), their token counts and their source paths: about `budget` tokens,
        at most budget + slack.

        Sections come in a random order; a section keeps the blocks that still fit, up to a third of
        the budget, so a middle placement has section boundaries to choose from. When every section
        has been tried (small fixture sources) the pool is walked again, reusing text; the corpus
        never needs a second walk.
        """
        cap = max(80, budget // 3)
        pool = self.sides[side]
        order = list(range(len(pool)))
        rng.shuffle(order)
        texts: list[str] = []
        counts: list[int] = []
        sources: list[str] = []
        used, seen = 0, set()
        for p in range(64):
            before = used
            for idx in order:
                rest = budget - used
                if rest < 12:
                    return texts, counts, sources
                if p == 0 and idx in seen:
                    continue
                sec = pool[idx]
                n = sec.head_tokens + 1
                keep = []
                for b, t in zip(sec.blocks, sec.block_tokens, strict=True):
                    if t <= MAX_BLOCK_TOKENS and n + t + 1 <= min(rest + slack, cap):
                        keep.append(b)
                        n += t + 1
                if not keep:
                    continue
                seen.add(idx)
                texts.append("\n\n".join([sec.heading or "", *keep]))
                counts.append(n)
                sources.append(self.docs[sec.doc].path)
                used += n
            if used == before:
                break
        return texts, counts, sources
