"""The corpus's skills come from the studio's importer (`pskills import` + `pskills skills export`,
data/studio_skills.py): tiny local packages, no network."""

from __future__ import annotations

import pytest

from npm_pack import npm_package
from pskills_train.data.config import REPO
from pskills_train.data.studio_skills import corpus_text, import_packages, split_spec

pytestmark = pytest.mark.skipif(not (REPO / "node_modules/tsx").exists(), reason="node_modules missing (npm ci)")

STEPS = ("Read the description of the change and the linked issue before you look at the code. Run the tests on "
         "your machine and check that the new ones fail without the change. Leave one comment for each problem.\n")
SPANISH = ("Lee la descripción del cambio y la incidencia que lo motiva antes de mirar el código. Ejecuta las pruebas "
           "en tu máquina y comprueba que las nuevas fallan sin el cambio. Deja un comentario por cada problema que "
           "encuentres, con una sugerencia cuando la tengas, y revisa de nuevo.\n")


def _skill(name: str, body: str, description: str = "Reviews a change before it is merged.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# Review\n\n{body}"


def test_the_studio_importer_decides_and_each_body_enters_the_corpus_once(tmp_path):
    npm = tmp_path / "npm"
    npm.mkdir()
    one = _skill("one", STEPS)
    specs = [
        npm_package(npm, "a", {"skills/one/SKILL.md": one.replace("\n", "\r\n"),
                            "skills/es/SKILL.md": _skill("es", SPANISH),
                            "skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n" + STEPS,
                            "skills/twin/SKILL.md": _skill("one", STEPS + "Then merge.\n")}),
        # a's `one` with another description: a new version to the library, a second copy to the corpus.
        npm_package(npm, "b", {"SKILL.md": _skill("one", STEPS, "Another description.")}),
        npm_package(npm, "c", {"skills/one/SKILL.md": _skill("one", STEPS, "Another description.")}),  # b's again
        npm_package(npm, "d", {"skills/copy/SKILL.md": _skill("copy", STEPS.upper())}),  # a's body, another name
    ]
    runs = import_packages(specs, npm, tmp_path / "work")
    assert [(r.package, r.version) for r in runs] == [(p, "1.0.0") for p in "abcd"]
    a, b, c, d = runs
    assert [k["path"] for k in a.kept] == ["skills/one/SKILL.md"]
    assert corpus_text(a.kept[0]["content"]) == one  # CRLF in the package, '\n' in the corpus
    assert a.kept[0]["license"] == "MIT" and len(a.kept[0]["bodyHash"]) == 64
    assert a.reasons() == {"not English": 1, "no 'description'": 1, "another skill": 1} and a.skill_files == 4
    assert b.kept == [] and b.imported == 1 and b.reasons() == {"same body": 1}  # stored as `one` version 2
    assert c.kept == [] and c.imported == 0 and c.reasons() == {"unchanged": 1}
    assert d.kept == [] and d.imported == 0 and d.reasons() == {"same body": 1}  # the importer's own check
    assert [r.skill_files for r in runs] == [4, 1, 1, 1]


def test_split_spec():
    assert split_spec("@scope/name@1.2.3") == ("@scope/name", "1.2.3")
    assert split_spec("name") == ("name", None)
