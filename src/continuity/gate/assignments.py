"""The secret detector for values assigned to secret-named keys in ENV, YAML, JSON, TOML and code.

`DB_PASSWORD=…`, `api_key: …`, `"clientSecret": "…"`, `password: str = "…"`, `--token …`: the
name says what the value is, so the question is whether the value is a literal secret rather than a
reference (`$VAR`, `${…}`, `settings.DB_PASSWORD`), a type, a path, a placeholder or code. Names are
split into words and the last secret word decides, because `password_file` and `token_url` name
something else. The scan starts from the keyword spans that `Doc.hits` found once for all detectors.
"""

from __future__ import annotations

import re
from functools import lru_cache

from continuity.gate import shapes
from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words

# Secret-named keys in ENV, YAML, JSON, TOML and code. The name is found from a keyword inside it and
# split into words (snake, kebab, dotted, camelCase); the last secret word decides, and only
# environment-like words may follow it (`api_key_prod` yes, `password_file` and `token_url` no).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_PASSWORD_WORDS = words("password passwd pwd pass passphrase passcode pw")
_PIN_WORDS = words("pin pincode")
_SECRET_WORDS = (
    _PASSWORD_WORDS
    | _PIN_WORDS
    | words("secret token apikey credential credentials creds secretkey privatekey accesskey authkey clientsecret")
)
KEY_QUALIFIER_NOT = words(
    "primary foreign sort partition public pub idempotency cache map dict lookup unique composite row object s3 "
    "registry translation i18n react hot short sign group host hash the a ssh gpg pgp deploy routing "
    "shard index field column json yaml self this cls my new old item entry next prev last first sorting"
)
_TRAILING_OK = words(
    "prod production dev development staging stage test live local qa uat old new primary secondary backup value "
    "raw plain b64 base64 encoded default main admin root ro rw readonly write read v1 v2 v3 1 2 3 current next "
    "previous prev override"
)
_BOOLEAN_LEADS = words("is has use no require show enable disable allow min max")


# Abbreviations people use for a secret's name, read as the word they stand for: a personal access
# token (`GH_PAT`), a secret key (`obs_sk`, `skey`).
_ABBREVIATIONS = {"pat": "token", "sk": "secretkey", "skey": "secretkey", "pwd": "pwd"}
# Secret words that end a compound written as one word (`authtoken`, `ACRPWD`, `Functionkey`), longest first.
_COMPOUND_ENDS = ("passphrase", "password", "passcode", "passwd", "secret", "token", "pwd", "key")


def word_parts(name: str) -> list[str]:
    """The words of a name, lower case: split at case changes, digits, `_`, `-` and `.`, then each run-on
    compound that ends in a secret word split once more (`authtoken` -> `auth token`), and abbreviations
    read as what they stand for (`pat` -> `token`)."""
    out: list[str] = []
    for word in (w.lower() for w in rx(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+").findall(name)):
        if word in _ABBREVIATIONS:
            out.append(_ABBREVIATIONS[word])
            continue
        if word not in _SECRET_WORDS and word not in _TRAILING_OK:
            end = next((e for e in _COMPOUND_ENDS if word.endswith(e) and len(word) - len(e) >= 2), "")
            if end:
                out.extend((word[: -len(end)], end))
                continue
        out.append(word)
    return out


@lru_cache(maxsize=512)
def secret_name(name: str) -> str:
    """Classify a name: "password", "pin", "key", "secret", or "" when it does not name a secret.

    The last secret word of the name decides; passwords are chosen by people, keys and secrets are
    generated, and the value checks differ accordingly."""
    words = word_parts(name)
    for index in range(len(words) - 1, -1, -1):
        word = words[index]
        joined = "".join(words[max(0, index - 1) : index + 1])
        secretish = word in _SECRET_WORDS or joined in _SECRET_WORDS
        if word == "key" and not secretish:
            secretish = index > 0 and words[index - 1] not in KEY_QUALIFIER_NOT
        if not secretish:
            if word not in _TRAILING_OK:
                return ""
            continue
        if words[0] in _BOOLEAN_LEADS or any(w in ("public", "pub", "publishable", "csrf", "xsrf") for w in words):
            return ""
        if word in _PIN_WORDS or joined in _PIN_WORDS:
            return "pin"
        if word in _PASSWORD_WORDS or joined in _PASSWORD_WORDS:
            return "password"
        return "key" if word == "key" else "secret"
    return ""


_TAIL = (
    r"[\"'\]*_]{0,4}[ \t]{0,8}(?P<op>:{1,3}=|[?+.]=|<-|=>|==|!=|=|:(?!:)|(?<=[ \t])\|(?=[ \t])|(?<=[\"']),)[ \t*_]{0,8}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\r\n]{0,512})(?P=q)|(?P<uv>[^\s\"'`,;|]{1,512}))"
)
_FLAG_TAIL = r"[ \t]{1,4}(?:([\"'])([^\"'\r\n]{1,512})\1|([^\s\"'`,;|&]{1,512}))"


def _assignments(doc: Doc) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    resume = 0
    name_run = rx(r"[A-Za-z0-9_.\-]{0,64}")
    sealed = "SealedSecret" in text
    for hit_start, hit_end in doc.hits:
        if hit_start < resume:
            continue
        begin = hit_start
        while begin > 0 and hit_start - begin < 64 and text[begin - 1] in _NAME_CHARS:
            begin -= 1
        end = name_run.match(text, hit_end).end()  # type: ignore[union-attr]  # {0,64} always matches
        resume = end
        name = text[begin:end]
        assigned = _assigned_after(text, begin, end, flag=name.startswith("--"))
        if assigned is None:
            continue
        value, quoted, after = assigned
        if name.lower() in _SECRET_WORDS or name.lower() == "key":
            begin, name = with_word_before(text, begin, name)  # "API key: …", "Stripe token = …"
        kind = secret_name(name)
        if sealed and value.startswith("Ag") and len(value) > 100:
            continue  # a SealedSecret's ciphertext is meant to be committed
        if kind and assigned_value_ok(value, quoted, kind):
            out.append((begin, "secret-assignment", value))
            resume = after  # a rejected value may hold the next name (`key="DB_PASSWORD" value="…"`)
    return out


def with_word_before(text: str, begin: int, name: str) -> tuple[int, str]:
    """Extend a one-word name by the word before it on the same line, when there is one."""
    if begin < 2 or text[begin - 1] not in " \t":
        return begin, name
    start = begin - 1
    while start > 0 and begin - start < 32 and text[start - 1] in _NAME_CHARS:
        start -= 1
    return (start, text[start:begin] + name) if start < begin - 1 else (begin, name)


_ANNOTATED_TAIL = (
    r"[\"'\]]{0,2}[ \t]{0,4}(?::[ \t]{0,4}|[ \t]{1,4}(?=[A-Za-z_*\[&]))[&*]?[A-Za-z_\[][A-Za-z0-9_.\[\], |]{0,60}?"
    r"[ \t]{1,4}=(?!=)[ \t]{0,4}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\r\n]{0,512})(?P=q)|(?P<uv>[^\s\"'`,;]{1,512}))"
)


def _opens_arguments(text: str, begin: int) -> bool:
    """Whether the name at `begin` is the first argument of a call or tuple: `(` just before it."""
    before = text[max(0, begin - 8) : begin].rstrip("\"'` \t")
    return before.endswith("(")


def _assigned_after(text: str, begin: int, end: int, flag: bool) -> tuple[str, bool, int] | None:
    """(value, was it quoted, where it ends) when an assignment operator follows a name at `end`.

    Also reads through a type annotation (`password: str = "…"`, `val token: String = "…"`) and, for
    command-line flags, a value after a space (`--password hunter2`).
    """
    ahead = text[end : end + 16].lstrip("\"']*_ \t")[:1]
    match = None
    if ahead and ahead in ":=|?+.<,":  # cheap test first: prose ("key points") has no operator here
        match = rx(_TAIL).match(text, end)
        if match is None or match.group("op") == ":" or (match.group("uv") or "")[:1] in "|>":
            match = rx(_YAML_BLOCK).match(text, end) or rx(_ANNOTATED_TAIL).match(text, end) or match
    elif ahead.isalpha() and "=" in text[end : end + 48]:  # a type, then the operator: `var token string = "…"`
        match = rx(_ANNOTATED_TAIL).match(text, end)
        match = match if match and match.group("q") else None
    if match and match.groupdict().get("op") not in ("==", "!="):
        value, quoted = _value_of(match)
        if match.groupdict().get("op") == "," and (not quoted or not _opens_arguments(text, begin)):
            # `("NAME", "value")` is an argument list only with a quoted value, and only when the name
            # is its first argument: in `tags: ["secrets", "1password"]` the strings are list items
            return None
        return value, quoted, match.end()
    if flag:
        match = rx(_FLAG_TAIL).match(text, end)
        if match:
            quoted = match.group(1) is not None
            return (match.group(2) if quoted else match.group(3)), quoted, match.end()
    following = text[end : end + 8].lstrip(" \t")[:1]
    if following not in ('"', "'", ">", "\n", "\r"):
        return None  # cheap test first: an attribute, a tag or a line break must follow
    match = rx(_ATTRIBUTE_VALUE).match(text, end) or rx(_NEXT_LINE_VALUE).match(text, end)
    if match is None:
        return None
    if match.group(0).startswith(">") and text[max(0, begin - 1) : begin] != "<":
        return None  # `>` closes a tag only after `<name`
    below = match.group(0).lstrip("\"' \t").startswith(("\n", "\r"))
    if below and "name" not in text[text.rfind("\n", 0, begin) + 1 : begin]:
        return None  # `value:` below belongs to a `- name:` entry only
    value, quoted = _value_of(match)
    return value, quoted, match.end()


# `<add key="DB_PASSWORD" value="…" />`, `<property name="token" value="…"/>`: the value in an attribute.
_ATTRIBUTE_VALUE = (
    r"[\"'][ \t]{1,8}(?:value|content)[ \t]{0,2}=[ \t]{0,2}(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,512})(?P=q))(?P<uv>)"
)
# `<apiToken>` then the value on its own line (or on the same one) and `</apiToken>`; a Kubernetes
# `- name: API_TOKEN` with its `value:` on the next line.
_NEXT_LINE_VALUE = (
    r"(?:>[ \t]{0,8}(?:\r?\n[ \t]{0,32})?(?P<uv>[^<\s]{1,512})[ \t]{0,8}(?:\r?\n[ \t]{0,32})?</"
    r"|[\"']?[ \t]{0,4}\r?\n[ \t]{0,32}value[ \t]{0,2}:[ \t]{0,4}"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,512})(?P=q)|(?P<uv2>[^\s\"']{1,512})))"
)
# A YAML block scalar: `token: |` and the value indented on the next line.
_YAML_BLOCK = (
    r"[\"']?[ \t]{0,4}:[ \t]{0,4}[|>][-+]?[ \t]{0,8}\r?\n[ \t]{1,32}(?P<uv>[^\s\"'`]{8,512})[ \t]{0,8}(?=\r?\n|$)"
)


def _value_of(match: re.Match[str]) -> tuple[str, bool]:
    """(value, was it quoted) from a match of one of the tails above."""
    groups = match.groupdict()
    if groups.get("q"):
        return groups["qv"] or "", True
    return groups.get("uv") or groups.get("uv2") or "", False


# Quoted words that are schema types or form-field names, not passwords.
SCHEMA_WORDS = words("string text password hidden required optional secret number integer boolean object array")


def assigned_value_ok(value: str, quoted: bool, kind: str) -> bool:
    """Is the value assigned to a secret-named key a literal secret (not a reference or a filler)?"""
    password = kind in ("password", "pin")
    value = value.strip()
    if not quoted:
        value = value.rstrip(".)]}")
    if value.isdigit():  # a label that says password or PIN leaves no doubt about a number
        return password and shapes.secret_digits(value, 4 if kind == "pin" else 6)
    if len(value) < 6 or value.lower() in shapes.PLACEHOLDER_VALUES:
        return False
    if value[0] in "$%" or (not quoted and value[0] in "!&@#|>*"):
        return False  # a reference, a format string, a YAML tag, anchor or block, a comment
    if (
        shapes.filler(value)
        or value.startswith((*shapes.PUBLIC_PREFIXES, "-----BEGIN"))
        or "://" in value
        or shapes.env_name(value)
    ):
        return False  # (a key block is the private-key detector's, which reads its body)
    if not quoted and any(c in value for c in "()[]{}"):
        return False  # code: a call, an index, a type
    if rx(r"[0-9:./ TZ+\-]+").fullmatch(value):
        return False  # a number, a date, a version
    if password and (passphrase_like(value, 4 if " " in value else 3) or run_together(value)):
        return True
    if shapes.word_like(value):
        # Under a password or PIN label, letters are a password: any word that is not a stand-in, a
        # type or the label's own word (`password: hidden`, `pwd: Password`); elsewhere a word is a name.
        return (
            password
            and len(value) >= 8
            and value.isalpha()
            and (quoted or value.islower())
            and value.lower() not in SCHEMA_WORDS
            and not any(w in value.lower() for w in ("password", "passwd", "secret", "pass"))
        )
    attribute = not quoted and rx(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+").fullmatch(value)
    if attribute and not any(shapes.token_like(part) for part in value.split(".")):
        return False  # attribute access in code: settings.DB_PASSWORD (not Vault's `s.<token>`)
    if path_like(value) or rx(r"[^@\s]+@[A-Za-z0-9-]+\.[A-Za-z.]+$").match(value):
        return False  # a path or an e-mail address
    if password:
        return shapes.char_classes(value) >= 2 or shapes.looks_random(value, 12)
    if len(value) < 12:  # short: mixed case and digits, as generators make them, not a word
        return shapes.char_classes(value) >= 3 and not shapes.wordy(value) and shapes.shannon_entropy(value) >= 2.5
    if kind == "key":
        return shapes.token_like(value)
    return (shapes.char_classes(value) >= 3 and len(value) >= 8) or shapes.token_like(value)


# Words that make a run of words a note, a reference or an identifier rather than a passphrase
# (`see-the-vault`, `stored in keychain`, `db-admin-password`); diceware lists avoid the short ones.
_NOT_PASSPHRASE = words(
    "the a an and or of to in on at by for from with via into see ask use using set per not no none never "
    "same as is are was be been every each after before when then only also above below stored kept managed "
    "rotated generated saved env environment var variable file path vault keychain keyring manager secret "
    "secrets password passwords passwd pass passphrase token tokens key keys credential credentials db "
    "database prod production staging dev test local admin user users app api service name ref reference "
    "value default placeholder example required optional"
)


def passphrase_like(value: str, min_words: int) -> bool:
    """Several lower-case words joined by hyphens or spaces (`correct-horse-battery-staple`), as diceware
    and password managers generate them: no word is short, none is a word of references or settings
    (underscores and dots join identifiers and attributes, not passphrases).
    A run of ordinary words is a sentence, so callers ask for more words where prose is likely."""
    match = rx(r"[a-z]{3,12}([- ])[a-z]{3,12}(?:\1[a-z]{3,12}){1,10}").fullmatch(value)
    if match is None or len(value) < 16:
        return False
    parts = value.split(match.group(1))
    return len(parts) >= min_words and not any(part in _NOT_PASSPHRASE for part in parts)


# Endings of the long words prose puts after "the password is" (`incomprehensible`, `unrecoverable`).
_PROSE_ENDINGS = tuple(
    sorted(words("able ible ive ful less ous ing ed tion sion ment ness ity ally ly ward wise ant ent ence ance ic"))
)


def run_together(value: str) -> bool:
    """Words run together into one long lower-case word (`correcthorsebatterystaple`): longer than
    almost any English word, not ending like the adjectives and nouns sentences put there, and not
    naming a secret itself (`vaultpasswordfile`)."""
    if len(value) < 16 or not (value.isascii() and value.isalpha() and value.islower()):
        return False
    if value.endswith(_PROSE_ENDINGS) or shapes.is_placeholder(value):
        return False
    return not any(word in value for word in ("password", "secret", "token", "vault"))


def path_like(value: str) -> bool:
    """A file path (`/run/secrets/db`, `~/.aws/credentials`, `C:\\keys`), not key material that
    happens to start with a slash: no segment of it looks generated."""
    if not (value[0] in "/~." or rx(r"[A-Za-z]:\\").match(value)):
        return False
    return not any(shapes.token_like(part) for part in rx(r"[/\\]").split(value) if len(part) >= 16)


FINDERS = (_assignments,)
