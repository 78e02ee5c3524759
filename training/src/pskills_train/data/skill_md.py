"""SKILL.md frontmatter, read as the studio reads it (main/skills/frontmatter.ts).

The TS side uses the `yaml` package (YAML 1.2 core schema, unique keys). PyYAML speaks YAML 1.1, so
the loader here is narrowed to 1.2's behaviour where it matters for frontmatter: only true/false
are booleans (`yes`, `on` stay strings), dates stay strings, and a repeated key is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

_FENCE = re.compile(r"^---[ \t]*$")
STRING_FIELDS = ("name", "description", "license", "compatibility")


class _Yaml12Loader(yaml.SafeLoader):
    pass


_Yaml12Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                    list("tTfF"))


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_Yaml12Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


@dataclass
class SkillMd:
    fields: dict[str, Any]
    body: str
    error: str | None  # the first error diagnostic the TS parser would report


def _split(content: str) -> tuple[str | None, str, str | None]:
    """(yaml, body, error) as splitFrontmatter: the first line opens, the next '---' line closes."""
    lines = re.findall(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$", content)  # lines.ts: \r\n, \n or \r
    strip_eol = [re.sub(r"(\r\n|\n|\r)$", "", ln) for ln in lines]
    if not strip_eol or not _FENCE.match(strip_eol[0].lstrip("\ufeff")):
        return None, content, "SKILL.md must start with a '---' line that opens the YAML frontmatter"
    for i in range(1, len(lines)):
        if _FENCE.match(strip_eol[i]):
            return "".join(lines[1:i]), "".join(lines[i + 1:]), None
    return None, "", "the frontmatter opened on line 1 is never closed by a '---' line"


def parse_skill_md(content: str) -> SkillMd:
    yaml_text, body, error = _split(content)
    if yaml_text is None:
        return SkillMd({}, body, error)
    try:
        value = yaml.load(yaml_text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        return SkillMd({}, body, f"invalid YAML: {str(e).splitlines()[0]}")
    value = {} if value is None else value
    if not isinstance(value, dict):
        return SkillMd({}, body, f"the frontmatter must be a mapping of fields, got a {type(value).__name__}")
    for key in STRING_FIELDS:
        if value.get(key) is not None and not isinstance(value[key], str):
            return SkillMd(value, body, f"field '{key}' must be a string")
    if value.get("metadata") is not None and not isinstance(value["metadata"], dict):
        return SkillMd(value, body, "field 'metadata' must be a mapping")
    tools = value.get("allowed-tools")
    if tools is not None and not (isinstance(tools, str) or
                                  (isinstance(tools, list) and all(isinstance(t, str) for t in tools))):
        return SkillMd(value, body, "field 'allowed-tools' must be a space-separated string or a list of strings")
    return SkillMd(value, body, None)
