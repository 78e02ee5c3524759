"""A Hugging Face checkpoint folder as a loaded base: refusals naming the missing file, the chat template,
special tokens, the weights in LlamaLM (model/hf_load.py), then the base bundle (bundle_writer.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from ..model import LlamaLM, load_hf
from .bundle import special_ids
from .bundle_writer import DTYPES, FromHfOptions, LoadedBase, progress, write_loaded_bundle
from .manifest import sha256_file


def chat_template_of(folder: Path, tcfg: dict[str, Any]) -> str:
    """The checkpoint's chat template: tokenizer_config.json's `chat_template` (a string, or a list of
    named templates: "default"), else chat_template.jinja, else chat_template.json."""
    t = tcfg.get("chat_template")
    if isinstance(t, list):
        named = {x.get("name"): x.get("template") for x in t if isinstance(x, dict)}
        t = named.get("default")
    if isinstance(t, str):
        return t
    if (folder / "chat_template.jinja").exists():
        return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    if (folder / "chat_template.json").exists():
        t = json.loads((folder / "chat_template.json").read_text()).get("chat_template")
        if isinstance(t, str):
            return t
    raise ValueError(f"{folder / 'tokenizer_config.json'}: no chat_template (nor chat_template.jinja beside it); "
                     f"a base model without one needs --chat-template FILE")


def checkpoint_files(folder: Path) -> None:
    """Refuse a folder that lacks what a bundle needs, naming the file."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"{folder / 'config.json'}: missing (not a Hugging Face checkpoint folder)")
    if not (folder / "model.safetensors").exists() and not (folder / "model.safetensors.index.json").exists():
        legacy = [p.name for p in folder.glob("pytorch_model*.bin")]
        hint = f" ({legacy[0]} found: convert it to safetensors first)" if legacy else ""
        raise FileNotFoundError(f"{folder / 'model.safetensors'}: missing, and no model.safetensors.index.json{hint}")
    if not (folder / "tokenizer.json").exists():
        hint = " (tokenizer.model found: the studio reads only the fast tokenizer.json)" \
            if (folder / "tokenizer.model").exists() else ""
        raise FileNotFoundError(f"{folder / 'tokenizer.json'}: missing{hint}")
    if not (folder / "tokenizer_config.json").exists():
        raise FileNotFoundError(f"{folder / 'tokenizer_config.json'}: missing")


def special_tokens(folder: Path, tok: Tokenizer, tcfg: dict[str, Any]) -> dict[str, Any]:
    """bos/eos/pad from tokenizer_config.json (special_tokens_map.json filling gaps); `stop` adds the
    eos ids of generation_config.json / config.json (Llama 3 ends a turn with <|eot_id|>)."""
    stm = folder / "special_tokens_map.json"
    merged = {**(json.loads(stm.read_text()) if stm.exists() else {}), **{k: v for k, v in tcfg.items() if v}}
    special = special_ids(tok, merged)
    stop = list(special["stop"])
    for name in ("generation_config.json", "config.json"):
        f = folder / name
        ids = json.loads(f.read_text()).get("eos_token_id") if f.exists() else None
        for i in ids if isinstance(ids, list) else [] if ids is None else [ids]:
            if isinstance(i, int) and i < tok.get_vocab_size() and i not in stop:
                stop.append(i)
    return {**special, "stop": stop}


def load_checkpoint(folder: Path, opts: FromHfOptions) -> tuple[LlamaLM, dict[str, Any], dict[str, Any]]:
    """(LM, tokenizer_config for the bundle, special tokens)."""
    checkpoint_files(folder)
    lm = load_hf(folder, lora_targets=opts.lora_targets, encoder_layer=opts.encoder_layer)
    tcfg = json.loads((folder / "tokenizer_config.json").read_text())
    tcfg["chat_template"] = opts.chat_template if opts.chat_template is not None else chat_template_of(folder, tcfg)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    if tok.get_vocab_size() > lm.cfg.vocab_size:
        raise ValueError(f"{folder / 'tokenizer.json'}: {tok.get_vocab_size()} tokens, more than config.json "
                         f"vocab_size {lm.cfg.vocab_size}")
    return lm, tcfg, special_tokens(folder, tok, tcfg)


def source_card(folder: Path, opts: FromHfOptions, lm: LlamaLM) -> dict[str, Any]:
    hashed = ["config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
              "model.safetensors.index.json", "generation_config.json", "chat_template.jinja"]
    files = {n: sha256_file(folder / n) for n in hashed if (folder / n).exists()}
    return {"kind": "hf checkpoint", "source": folder.name, "source_sha256": files, "model": lm.cfg.to_dict(),
            "dtype": opts.dtype, "parameters": lm.num_params(), "steps": 0, "data": [], **opts.extra_card}


def write_base_bundle(folder: Path, out: Path, opts: FromHfOptions) -> Path:
    """The checkpoint as a base-only bundle (hypernet null) at `out`, written under a temporary name."""
    if opts.dtype not in DTYPES:
        raise ValueError(f"--dtype: {opts.dtype!r} is not one of {DTYPES}")
    progress(1, opts.steps, f"loading the checkpoint {folder.name}")
    lm, tcfg, special = load_checkpoint(folder, opts)
    src = LoadedBase(lm=lm, tokenizer_json=(folder / "tokenizer.json").read_bytes(), tokenizer_config=tcfg,
                     special=special, card=source_card(folder, opts, lm), default_id=folder.resolve().name)
    return write_loaded_bundle(src, out, opts)
