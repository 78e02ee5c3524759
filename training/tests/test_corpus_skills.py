"""Skill selection mirrors the studio importer (main/skills/filters.ts, normalize.ts, importer.ts)."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from pskills_train.data.filters import detect_non_english, licence_forbids_reuse, normalize_body
from pskills_train.data.npm_pack import PackedSkills, read_skills, tarball_name
from pskills_train.data.skill_md import parse_skill_md
from pskills_train.data.skills import select_skills

BODY = ("# Review a pull request\n\n## Steps\n1. Read the description and the linked issue before you look at "
        "the code.\n2. Run the tests on your machine and check that the new ones fail without the change.\n"
        "3. Leave one comment for each problem, with a suggestion when you have one.\n")
SPANISH = ("# Revisar un cambio\n\nLee la descripción del cambio y la incidencia que lo motiva antes de mirar el "
           "código. Ejecuta las pruebas en tu máquina y comprueba que las nuevas fallan sin el cambio. Deja un "
           "comentario por cada problema que encuentres, con una sugerencia cuando la tengas, y revisa de nuevo.\n")


def skill(name: str, body: str = BODY, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: Reviews a change before it is merged.\n{extra}---\n{body}"


def test_frontmatter_is_read_as_yaml_1_2_with_unique_keys():
    assert parse_skill_md(skill("a", extra="license: yes\n")).fields["license"] == "yes"
    assert parse_skill_md(skill("a", extra="compatibility: 2024-01-01\n")).error is None
    assert "duplicate key" in parse_skill_md(skill("a", extra="name: b\n")).error
    assert "must start with" in parse_skill_md(BODY).error
    assert "never closed" in parse_skill_md("---\nname: a\n").error
    assert "must be a string" in parse_skill_md(skill("a", extra="license: [MIT]\n")).error


@pytest.mark.parametrize("licence,forbidden", [
    ("MIT", False), ("(MIT OR Apache-2.0)", False), ("SEE LICENSE IN LICENSE.txt", False), (None, False),
    ("Proprietary", True), ("UNLICENSED", True), ("CC-BY-NC-ND-4.0", True), ("Do not redistribute.", True),
])
def test_licence_rules(licence, forbidden):
    assert (licence_forbids_reuse(licence) is not None) is forbidden


def test_normalize_and_language_match_the_importer():
    assert normalize_body("**Hello**,  World!\n- Item") == normalize_body("hello world\n* item") == "hello world item"
    assert detect_non_english(SPANISH).startswith("not English")
    assert detect_non_english(BODY) is None
    han = "审查代码变更的技能，请在合并之前仔细阅读所有修改。"
    crlf = "```\r\ncode\r\n```\r\n" + f"{han}\r\n" * 3  # \r ends a line in JS too
    assert detect_non_english(crlf).startswith("not English")
    prose = "这是一个用于审查代码变更的技能，请在合并之前仔细阅读所有的修改内容并运行测试。"
    assert detect_non_english(prose * 3).startswith(
        "not English: 100% of the prose words are in a non-Latin script, mostly Han")


def test_select_skills_applies_the_importer_checks_in_order():
    pkg = PackedSkills("p", "1.0.0", "MIT", skills={
        "skills/a-ok/SKILL.md": skill("ok"),  # judged in archive order: first
        "skills/copy/SKILL.md": skill("copy", BODY.replace("# Review", "#  review").upper()),
        "skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n" + BODY,
        "skills/closed/SKILL.md": skill("closed", BODY + "\nMore.\n", "license: Proprietary\n"),
        "skills/es/SKILL.md": skill("es", SPANISH),
        "skills/twin/SKILL.md": skill("ok", BODY + "\nAnother step.\n"),
    }, skipped=[("skills/big/SKILL.md", "file over 1 MiB (2000000 bytes)")])
    seen: dict[str, str] = {}
    kept, reasons = select_skills("p", pkg, seen)
    assert [s.path for s in kept] == ["skills/a-ok/SKILL.md"]
    assert kept[0].licence == "MIT" and kept[0].text == skill("ok")
    assert reasons == {"duplicate body": 1, "no 'description'": 1, "skill licence": 1, "not English": 1,
                       "another skill": 1, "file over": 1}
    again, reasons = select_skills("q", PackedSkills("q", "1", "ISC", skills={"SKILL.md": skill("x")}), seen)
    assert again == [] and reasons == {"duplicate body": 1}  # bodies are unique across packages


def _tgz(path, entries: dict[str, bytes], links: dict[str, str] | None = None) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)


def test_read_skills_from_tarball(tmp_path):
    tgz = tmp_path / "p.tgz"
    _tgz(tgz, {
        "package/package.json": json.dumps({"name": "@s/p", "version": "1.2.3", "license": {"type": "ISC"}}).encode(),
        "package/skills/a/SKILL.md": skill("a").encode(),
        "package/skills/bin/SKILL.md": b"---\x00---",
        "package/skills/latin1/skill.md": "caf\xe9".encode("latin-1"),
        "package/skills/huge/SKILL.md": b"x" * ((1 << 20) + 1),
        "package/README.md": b"not a skill",
    }, links={"package/skills/link/SKILL.md": "../../../etc/passwd"})
    got = read_skills(tgz)
    assert (got.name, got.version, got.licence) == ("@s/p", "1.2.3", "ISC")
    assert list(got.skills) == ["skills/a/SKILL.md"]
    assert dict(got.skipped) == {
        "skills/bin/SKILL.md": "binary file (NUL byte at offset 3)",
        "skills/huge/SKILL.md": f"file over 1 MiB ({(1 << 20) + 1} bytes)",
        "skills/latin1/skill.md": "invalid UTF-8 at byte offset 3",
        "skills/link/SKILL.md": "link entry (→ ../../../etc/passwd) not followed",
    }
    assert tarball_name("@s/p", "1.2.3") == "s-p-1.2.3.tgz"


@pytest.mark.parametrize("bad", ["package/../../evil/SKILL.md", "/etc/SKILL.md"])
def test_read_skills_refuses_entries_escaping_the_root(tmp_path, bad):
    tgz = tmp_path / "evil.tgz"
    _tgz(tgz, {"package/package.json": b"{}", bad: skill("evil").encode()})
    with pytest.raises(ValueError, match="rejected"):
        read_skills(tgz)
