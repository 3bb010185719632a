"""What a query means beyond its words: function words, HTTP status codes, this computer's names.

Three kinds of knowledge, none of them fitted to particular queries:

- `FUNCTION_WORDS`: English closed-class words (pronouns, determiners, prepositions, conjunctions,
  auxiliaries: the Snowball project's English stop list). In a task sentence they carry no topic, and
  in short notes they are rare enough for BM25 to rank a note on "who" or "while" alone.
- `HTTP_STATUS`: the IANA registry's reason phrases of the status codes an application meets. A task
  says "429" where a note says "too many requests", or the reverse; either form finds both.
- this device's names: the `aliases` and `title` of `50-devices/<device>/DEVICE.md`, which the person
  writes ("laptop", "MacBook"). A query that names this computer so matches the notes in its own
  `notes/` folder (and `scope: device` notes of this device) as if they carried the name.
"""

from __future__ import annotations

import os
from pathlib import Path

from continuity import tunables
from continuity.errors import NoteError
from continuity.recall.terms import Term, words
from continuity.vault import access, notes, registry

_SNOWBALL_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
    hers herself it its itself they them their theirs themselves what which who whom this that these
    those am is are was were be been being have has had having do does did doing would should could
    ought a an the and but if or because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over under again further
    then once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don shouldn now d ll m o re ve y ain
"""
FUNCTION_WORDS = frozenset(_SNOWBALL_ENGLISH.split())

HTTP_STATUS = {
    "400": "bad request",
    "401": "unauthorized",
    "402": "payment required",
    "403": "forbidden",
    "404": "not found",
    "405": "method not allowed",
    "406": "not acceptable",
    "408": "request timeout",
    "409": "conflict",
    "410": "gone",
    "411": "length required",
    "412": "precondition failed",
    "413": "content too large",
    "414": "uri too long",
    "415": "unsupported media type",
    "416": "range not satisfiable",
    "418": "i'm a teapot",
    "421": "misdirected request",
    "422": "unprocessable entity",
    "423": "locked",
    "425": "too early",
    "426": "upgrade required",
    "428": "precondition required",
    "429": "too many requests",
    "431": "request header fields too large",
    "451": "unavailable for legal reasons",
    "500": "internal server error",
    "501": "not implemented",
    "502": "bad gateway",
    "503": "service unavailable",
    "504": "gateway timeout",
    "505": "http version not supported",
    "507": "insufficient storage",
    "508": "loop detected",
    "511": "network authentication required",
}
# Reason phrases of more than one word, as token tuples, longest first: a single word such as
# "conflict" or "gone" is too common in prose to stand for its code.
_PHRASES = sorted(
    ((tuple(words(phrase)), code) for code, phrase in HTTP_STATUS.items() if len(words(phrase)) > 1),
    key=lambda item: -len(item[0]),
)
_ONE_WORD = {"unauthorized": "401", "forbidden": "403", "unprocessable": "422"}


def is_function_word(term: Term) -> bool:
    """A single unquoted word of the closed classes; identifiers and phrases never are."""
    return len(term.alternatives) == 1 and len(term.alternatives[0]) == 1 and term.text in FUNCTION_WORDS


def with_http_status(terms: list[Term]) -> list[Term]:
    """Terms where a status code also matches its reason phrase, and a reason phrase its code.

    A phrase spread over consecutive one-word terms (`too many requests`) becomes one term that
    matches the phrase or the code, so the concept counts once."""
    out: list[Term] = []
    index = 0
    while index < len(terms):
        term = terms[index]
        merged = False
        for phrase, code in _PHRASES:
            size = len(phrase)
            window = terms[index : index + size]
            if len(window) == size and all(t.alternatives == ((w,),) for t, w in zip(window, phrase, strict=True)):
                out.append(Term(" ".join(phrase), (phrase, (code,))))
                index += size
                merged = True
                break
        if merged:
            continue
        single = term.alternatives[0] if len(term.alternatives) == 1 else ()
        if len(single) == 1 and single[0] in HTTP_STATUS:
            out.append(Term(term.text, (single, tuple(words(HTTP_STATUS[single[0]])))))
        elif len(single) == 1 and single[0] in _ONE_WORD:
            out.append(Term(term.text, (single, (_ONE_WORD[single[0]],))))
        else:
            out.append(term)
        index += 1
    return out


_names_cache: dict[tuple[str, str], tuple[tuple[int, int, int], tuple[tuple[str, ...], ...]]] = {}


def device_names(root: Path, device: str) -> tuple[tuple[str, ...], ...]:
    """This device's names from its profile (`aliases`, `title`, and its id), as token tuples.

    Read through the vault's guarded reader (no link, size first) and kept per process while the
    profile's size and times stay the same; a profile that cannot be read gives the id alone."""
    own = (tuple(words(device)),)
    rel = registry.DEVICE.at(device=device)
    try:
        info = os.lstat(root / rel)
    except OSError:
        return own
    key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    cached = _names_cache.get((str(root), device))
    if cached is not None and cached[0] == key:
        return cached[1]
    names: list[tuple[str, ...]] = list(own)
    try:
        meta = notes.parse_note(access.read_capped(root, rel, tunables.RECALL_NOTE_CAP_BYTES), rel).meta
    except NoteError:
        meta = {}
    aliases = meta.get("aliases")
    values = [aliases] if isinstance(aliases, str) else aliases if isinstance(aliases, list) else []
    title = meta.get("title")
    for value in [*values, *([title] if isinstance(title, str) else [])]:
        tokens = tuple(w for w in words(str(value)) if w not in FUNCTION_WORDS)
        if tokens and tokens not in names:
            names.append(tokens)
    found = tuple(names)
    _names_cache[(str(root), device)] = (key, found)
    return found


def names_device(terms: list[Term], names: tuple[tuple[str, ...], ...]) -> list[int]:
    """Positions of the terms that name this device (alone, or as consecutive words of a name)."""
    flat = [t.alternatives[0][0] if len(t.alternatives) == 1 and len(t.alternatives[0]) == 1 else None for t in terms]
    hits: list[int] = []
    for position, term in enumerate(terms):
        for name in names:
            if any(alt == name for alt in term.alternatives):
                hits.append(position)
                break
            if len(name) > 1 and tuple(flat[position : position + len(name)]) == name:
                hits.extend(range(position, position + len(name)))
                break
    return sorted(set(hits))
