"""The note templates' placeholder sentences, recognised so that template text never passes as memory.

`lifecycle init` creates the device and project profiles from `templates/`, and `handoff new` starts
from `templates/handoff.md`; until the person writes them, their sections hold only the templates'
explanatory sentences. Those sentences describe what to write, not anything true about this computer
or project, so a hot source whose compact part holds nothing else is left out of the brief ("not
filled in yet"), doctor warns about it, and `handoff new` refuses a body that is still the template.

The sentences are kept here rather than read from `templates/` at every session start: the hook must
not depend on where the templates are installed, and this module is pinned like the rest of the
startup code. `tests/brief/test_placeholders.py` holds the set to the templates' text, so a changed template
cannot silently turn its sentences into memory.

The comparison is on whole lines with list markers, emphasis and white space normalized and letters
case-folded, so a person who keeps one template bullet and adds their own has written memory; only a
section made of template lines (and headings and blank lines) is a placeholder.
"""

from __future__ import annotations

import re

# Every body line of templates/device.md, templates/project.md and templates/handoff.md that is not
# a heading: the text a person is meant to replace.
TEMPLATE_SENTENCES = frozenset(
    {
        # templates/device.md
        "Operating system, shell and the tool versions that matter here.",
        "Path mappings and local constraints an agent must respect on this computer.",
        "Detailed evidence about this computer belongs in `notes/` beside this file.",
        # templates/project.md
        "What this project is, in one line.",
        "How to build and test it; where the important code lives.",
        "Constraints and conventions an agent must know before changing it.",
        "Background that need not be loaded at every session start.",
        # templates/handoff.md
        "What this work is for, and where it stands now, in two or three sentences.",
        "What was done, with evidence a later task can check: files, commits, test runs.",
        "Unresolved risks, and decisions a later task must not silently undo.",
        "The first concrete next action (one to three items).",
    }
)

_MARKER = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")


def normalized(line: str) -> str:
    """A line without its list marker, emphasis and spacing, case-folded: what is compared."""
    text = _MARKER.sub("", line.strip())
    text = text.replace("**", "").replace("__", "")
    return " ".join(text.split()).casefold()


_KNOWN = frozenset(normalized(sentence) for sentence in TEMPLATE_SENTENCES)


def is_placeholder_line(line: str) -> bool:
    return normalized(line) in _KNOWN


def only_placeholders(text: str) -> bool:
    """True when `text` has at least one template sentence and nothing else but headings and blanks."""
    found = False
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not is_placeholder_line(stripped):
            return False
        found = True
    return found
