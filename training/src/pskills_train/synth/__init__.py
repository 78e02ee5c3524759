"""Stage-2 trajectory synthesizers (docs/design.md §1): template (offline) and LLM (OpenAI-compatible endpoint)."""

from .llm import Limits, LLMSynthesizer, validate_trajectory
from .skill import Section, Skill, find_sections, load_skills, skill_from_text
from .template import TemplateSynthesizer, section_kind
from .trajectory import Synthesizer, Trajectory, read_jsonl, write_jsonl

__all__ = ["Limits", "LLMSynthesizer", "validate_trajectory", "Section", "Skill", "find_sections", "load_skills",
           "skill_from_text", "TemplateSynthesizer", "section_kind", "Synthesizer", "Trajectory", "read_jsonl",
           "write_jsonl"]
