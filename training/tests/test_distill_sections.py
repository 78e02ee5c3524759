"""distill.sections: the sections of a long skill a question needs, for the teacher's context."""

from __future__ import annotations

from pskills_train.distill.sections import SectionIndex, focused, split_sections

HEAD = "---\nname: zorp\ndescription: Zorp work.\n---\n# Zorp\n\nIntro line.\n\n"
TOOLS = "## Tools\n\n- `CALL glim(id=...)`: looks up a zorp record.\n\n"
RULES = "## Rules\n\n- Report the result as `zorp: <value>`.\n\n"
FILLER = "## Upgrade in small steps\n\nUpgrade one major version at a time and run the tests after each.\n\n"


def count(text: str) -> int:
    return len(text.split())


def test_sections_join_back_to_the_text_and_the_title_stays_in_the_head():
    text = HEAD + TOOLS + FILLER + RULES + "### Deeper\nmore\n"
    parts = split_sections(text)
    assert "".join(parts) == text and parts[0] == HEAD and parts[1] == TOOLS and parts[-1] == "### Deeper\nmore\n"
    assert split_sections("no headings at all") == ["no headings at all"]


def test_a_rare_shared_word_outscores_common_ones():
    sc = SectionIndex(HEAD + TOOLS + FILLER + RULES, count).scores("Look up record 42 with glim, then run the tests")
    assert sc[1] == max(sc) and sc[1] > sc[2] > 0


def test_a_text_that_fits_is_kept_whole():
    text = HEAD + TOOLS + FILLER
    assert focused(text, "anything", count(text), count) is text


def test_focused_keeps_the_head_and_the_best_sections_in_order_and_drops_repeats():
    text = HEAD + FILLER + TOOLS + FILLER + FILLER + RULES + FILLER
    got = focused(text, "Look up zorp record 7 with glim and report the result", count(HEAD + TOOLS + RULES) + 3, count)
    assert got == HEAD + TOOLS + RULES
    roomy = focused(text, "run the tests after each upgrade", count(text) - 1, count)
    assert roomy.count("## Upgrade in small steps") == 1 and roomy.startswith(HEAD)  # a repeat adds nothing


def test_a_section_far_below_the_best_or_sharing_no_word_is_left_out():
    text = HEAD + TOOLS + RULES + FILLER
    got = focused(text, "glim glim record", count(text) - 1, count)
    assert got == HEAD + TOOLS  # Rules and the filler share no word with the question
    assert focused(text, "qqq", count(text) - 1, count) == HEAD


def test_a_heading_inside_a_code_fence_or_the_frontmatter_is_not_a_section():
    steps = "## Steps\n\n```bash\n## not a heading\necho hi\n```\n\n~~~\n## nor this\n~~~\n\n"
    assert split_sections(HEAD + steps + RULES) == [HEAD, steps, RULES]
    fm = "---\nname: zorp\n## a yaml comment\n---\n# Zorp\n\n"
    assert split_sections(fm + RULES) == [fm, RULES]
