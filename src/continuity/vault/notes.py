"""Notes: Markdown with a YAML frontmatter block, and the one loader for that format.

Only this module imports ruamel.yaml, and only when a frontmatter block is actually parsed, so the
startup hook's cached path never pays for it. Frontmatter is parsed in safe mode and refused when it
has duplicate keys, anchors or aliases (the "billion laughs" family), nesting deeper than
`FRONTMATTER_MAX_DEPTH`, more than `FRONTMATTER_CAP_BYTES`, or is not a mapping. The parser's work
is bounded while it scans the text, before any tree is built (`_bounded_scanner`): a pure-Python
YAML scanner spends time on every open flow level for every token, so `x: [[[[…` of 16 KiB would
cost seconds before a depth check on the tree could run. The startup hook also caps what one run
spends on YAML in all (`run_allowance`). Text must be valid
UTF-8; a leading BOM is dropped and every line ending becomes `\\n` before anything else looks at it,
so line numbers in notices count from the first line of the file, frontmatter included.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from continuity import limits
from continuity.errors import NoteError


class Note(NamedTuple):
    meta: dict[str, Any]
    body: str
    body_start_line: int  # 1-based line of the file where the body begins
    text: str  # the whole decoded, newline-normalized text


def normalize_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for sep in ("\u2028", "\u2029", "\x85"):
        if sep in text:
            text = text.replace(sep, "\n")
    return text


def decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise NoteError(f"{name} line {line}: not valid UTF-8", "invalid") from None
    return normalize_newlines(text.removeprefix("\ufeff"))


def split_frontmatter(text: str, name: str) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, body start line). A block that never closes is an error."""
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return None, text, 1
    end = -1
    position = 4
    line_no = 2
    while position <= len(text):
        newline = text.find("\n", position)
        line = text[position:] if newline < 0 else text[position:newline]
        if line.rstrip() in ("---", "..."):
            end = position
            break
        if newline < 0:
            break
        position = newline + 1
        line_no += 1
    if end < 0:
        raise NoteError(f"{name}: the frontmatter block has no closing '---' line", "invalid")
    front = text[4:end]
    after = text.find("\n", end)
    body = "" if after < 0 else text[after + 1 :]
    return front, body, line_no + 1


class _Bound(Exception):
    """The scanner stopped at a cap; the message says which."""


_RUN_LEFT: list[int] = []  # the tokens the current run may still scan; empty: no run allowance
_SCANNED: list[int] = [0]  # every token any scanner in this process asked for (the work done)


def tokens_scanned() -> int:
    """How many times a scanner in this process fetched tokens: the measure of YAML work done."""
    return _SCANNED[0]


@contextlib.contextmanager
def run_allowance(tokens: int = limits.FRONTMATTER_RUN_MAX_TOKENS) -> Iterator[None]:
    """Within this block, all YAML scanned together stops after `tokens` tokens (the startup hook)."""
    _RUN_LEFT.append(tokens)
    try:
        yield
    finally:
        _RUN_LEFT.pop()


@functools.cache  # one class for the process: building it again for every note cost the cold start
def _bounded_scanner() -> Any:
    """ruamel.yaml's scanner, stopped as soon as a block passes a cap: each call of `fetch_more_tokens`
    makes at least one token, and the depth it sees (open flow collections plus block indentation
    levels) is never more than the depth of the tree being described, so nothing the tree check
    would accept is refused here, and nothing is scanned past the caps."""
    from ruamel.yaml.scanner import Scanner

    class BoundedScanner(Scanner):
        def fetch_more_tokens(self) -> Any:
            self.continuity_tokens = getattr(self, "continuity_tokens", 0) + 1
            _SCANNED[0] += 1
            if self.continuity_tokens > limits.FRONTMATTER_MAX_TOKENS:
                raise _Bound(f"frontmatter has more than {limits.FRONTMATTER_MAX_TOKENS} YAML tokens")
            if self.flow_level + len(self.indents) > limits.FRONTMATTER_MAX_DEPTH:
                raise _Bound("frontmatter is nested too deeply")
            if _RUN_LEFT:
                _RUN_LEFT[-1] -= 1
                if _RUN_LEFT[-1] < 0:
                    raise _Bound("left out: this run's allowance for YAML frontmatter is spent")
            return super().fetch_more_tokens()

    return BoundedScanner


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = _bounded_scanner()
    yaml.allow_duplicate_keys = False
    return yaml


def _problem_text(problem: str) -> str:
    """The parser's problem, first line only, with the note's own text elided.

    Parser messages quote what they choke on (`could not determine a constructor for the tag
    '!ghp_…'`, `failed to construct timestamp from "…"`), and frontmatter is where people paste
    tokens; the message reaches notices, the brief and doctor before any secret scan, so a quoted
    value is shown only when it is a single character or one of the parser's `<token>` names.
    """

    def elide(match: re.Match[str]) -> str:
        inner = match.group(0)[1:-1]
        return match.group(0) if len(inner) <= 2 or re.fullmatch(r"<[a-z ]+>", inner) else "'…'"

    return re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", elide, problem.split("\n")[0])


def _error_line(exc: Exception) -> str:
    """' line N' of the file for the person to fix, or '' when the parser gave no mark.

    The parser's problem mark is where it noticed the error. For an unterminated construct (a line
    without its ':', an open quote, an open flow list or mapping) that is the start of the next line
    or the end of the block, one or more lines too late; its context mark is where the construct
    began, the line to fix. For everything else (a duplicate key, a stray list item) the context is
    the whole enclosing mapping and the problem mark is the right line. Marks count from 0 in the
    frontmatter text, which starts on the file's line 2.
    """
    context = str(getattr(exc, "context", None) or "")
    unterminated = context.startswith(("while scanning a", "while parsing a flow"))
    mark = getattr(exc, "context_mark" if unterminated else "problem_mark", None) or getattr(exc, "problem_mark", None)
    return f" line {mark.line + 2}" if mark is not None else ""


def parse_frontmatter(front: str, name: str) -> dict[str, Any]:
    """The frontmatter mapping, parsed once: flat blocks by `flatyaml`, the rest by ruamel.yaml."""
    if len(front.encode("utf-8")) > limits.FRONTMATTER_CAP_BYTES:
        raise NoteError(f"{name}: frontmatter is over {limits.FRONTMATTER_CAP_BYTES} bytes", "invalid")
    from continuity.vault import flatyaml  # lazy: a start that parses no frontmatter loads no parser

    flat = flatyaml.parse(front)
    if flat is not None:
        return flat
    meta = _load_yaml(front, name)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) for k in meta):
        raise NoteError(f"{name}: frontmatter must be a mapping with text keys", "invalid")
    return meta


def _check_tree(root: Any, name: str) -> None:
    """Refuse anchors (and so aliases) and nesting deeper than FRONTMATTER_MAX_DEPTH, before anything is
    constructed: the composed tree shares an aliased node rather than copying it, so it stays small
    even for a "billion laughs" block, and only construction would expand it."""
    from ruamel.yaml import nodes

    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if getattr(node, "anchor", None):
            raise NoteError(f"{name}: frontmatter uses YAML anchors or aliases, which are refused", "invalid")
        if isinstance(node, nodes.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, nodes.SequenceNode):
            children = list(node.value)
        else:
            continue
        if depth + 1 > limits.FRONTMATTER_MAX_DEPTH:
            raise NoteError(f"{name}: frontmatter is nested too deeply", "invalid")
        stack.extend((child, depth + 1) for child in children)


def _load_yaml(front: str, name: str) -> Any:
    """Compose the block once, check the tree, then construct it from that same tree."""
    from ruamel.yaml.error import YAMLError

    yaml = _yaml()
    parser = None
    try:
        constructor, parser = yaml.get_constructor_parser(front)
        root = constructor.composer.get_single_node()
        if root is None:
            return None
        _check_tree(root, name)
        return constructor.construct_document(root)
    except NoteError:
        raise
    except _Bound as exc:
        raise NoteError(f"{name}: {exc}", "invalid") from None
    except YAMLError as exc:
        where = _error_line(exc)
        problem = getattr(exc, "problem", None) or type(exc).__name__
        kind = "duplicate key" if "Duplicate" in type(exc).__name__ else _problem_text(str(problem))
        raise NoteError(f"{name}{where}: invalid frontmatter ({kind})", "invalid") from None
    except Exception as exc:
        # The parser's own failures on hostile input (RecursionError, ValueError, and a KeyError for
        # `!!bool maybe`) are a broken note, not a crash of the session start.
        raise NoteError(f"{name}: invalid frontmatter ({type(exc).__name__})", "invalid") from None
    finally:
        if parser is not None:
            parser.dispose()


def parse_note(data: bytes, name: str, *, require_frontmatter: bool = True) -> Note:
    text = decode(data, name)
    front, body, start = split_frontmatter(text, name)
    if front is None:
        if require_frontmatter:
            raise NoteError(f"{name}: no frontmatter block (a note starts with a '---' line)", "invalid")
        return Note({}, body, start, text)
    return Note(parse_frontmatter(front, name), body, start, text)


def as_utc(value: object) -> dt.datetime | None:
    """A frontmatter time as an aware UTC datetime; quoted and unquoted forms mean the same."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if isinstance(value, str):
        raw = value.strip()
        if raw.endswith(("Z", "z")):
            raw = raw[:-1] + "+00:00"
        try:
            parsed = dt.datetime.fromisoformat(raw)
        except ValueError:
            return None
        return parsed.replace(tzinfo=dt.timezone.utc) if parsed.tzinfo is None else parsed.astimezone(dt.timezone.utc)
    return None


def as_date(value: object) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    moment = as_utc(value)
    return moment.date() if moment else None


def format_utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _heading(line: str) -> tuple[int, str] | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and not rest[0].isspace()):
        return None
    title = rest.strip().rstrip("#").strip()
    return level, title


def headings(body: str) -> list[tuple[int, int, str]]:
    """(line index, level, title) of ATX headings outside fenced code blocks."""
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    for index, line in enumerate(body.split("\n")):
        stripped = line.lstrip(" ")
        marker = stripped[:3]
        if marker in ("```", "~~~") and len(line) - len(stripped) <= 3:
            char = marker[0]
            run = len(stripped) - len(stripped.lstrip(char))
            if fence is None:
                fence = char * run
            elif stripped.startswith(fence) and not stripped.strip(char).strip():
                fence = None
            continue
        if fence is None:
            heading = _heading(line)
            if heading:
                found.append((index, heading[0], heading[1]))
    return found


def section(body: str, title: str) -> str | None:
    """The text under a level-two heading (any case) up to the next heading of level one or two."""
    lines = body.split("\n")
    marks = headings(body)
    wanted = " ".join(title.split()).casefold()
    for position, (index, level, text) in enumerate(marks):
        if level == 2 and " ".join(text.split()).casefold() == wanted:
            end = len(lines)
            for later_index, later_level, _ in marks[position + 1 :]:
                if later_level <= 2:
                    end = later_index
                    break
            return "\n".join(lines[index + 1 : end]).strip("\n")
    return None


def compact_part(body: str) -> str:
    """What a hot source contributes: its `## Brief` section when it has one, else its whole body."""
    brief = section(body, "Brief")
    return (brief if brief is not None else body).strip("\n")


def dump_frontmatter(meta: dict[str, Any]) -> str:
    """Serialize frontmatter for writers; times are written as quoted UTC strings."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buffer = io.StringIO()
    clean = {k: (format_utc(v) if isinstance(v, dt.datetime) else v) for k, v in meta.items()}
    yaml.dump(clean, buffer)
    return buffer.getvalue()


def compose(meta: dict[str, Any], body: str) -> str:
    return f"---\n{dump_frontmatter(meta)}---\n{body if body.endswith(chr(10)) else body + chr(10)}"
