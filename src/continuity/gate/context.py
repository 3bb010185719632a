"""Secret detectors that read the words around a value: sentences, other languages, service names.

People write "the staging password is …", "changed the root password to …", "Passwort ist …",
`login: admin / …`, ~/.netrc lines and `sshpass -p …`; and some keys (AWS secret keys, Twilio and
Mailgun tokens) have no prefix and are told apart from hashes only by a nearby word naming the
service. Prose is where false positives come from ("the password is stored in the vault"), so an
unquoted value in a sentence must not read as a word, and every expression waits for literal words in
the note; case-blind ones run on the lower-cased text (`Doc.caseless`) instead of with IGNORECASE.
"""

from __future__ import annotations

import re

from continuity.gate import shapes
from continuity.gate.assignments import KEY_QUALIFIER_NOT, SCHEMA_WORDS, passphrase_like, run_together
from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words
from continuity.gate.structures import credential_ok

# "The password is …", "pw for staging: …", "the API token is …": secrets written in sentences.
_SENTENCE = (
    r"(pass(?:word|phrase|code)?|pwd|pw|pin|token|api[ _-]?key|secret|key)\b"
    r"([ \t]{1,4}(?:for|to|of|on|at)[ \t]{1,4}[^.\n:=!?]{1,60}?|[ \t]{0,4}\([^)\n]{1,40}\))?"
    r"[ \t]{0,4}([ \t]is|[ \t]was|[ \t]remains|[ \t]will[ \t]be|[ \t](?:set|changed|reset)[ \t]to|=|:|->|→|—|–|[ \t]-)"
    r"[ \t]{1,4}(?:now[ \t]{1,4}|still[ \t]{1,4}|set[ \t]to[ \t]{1,4}|just[ \t]{1,4}|simply[ \t]{1,4})?"
    r"([\"'`“‘]?)([^\s\"'`”’]{4,256})"
)


def _sentences(doc: Doc) -> list[Candidate]:
    """Secrets written in sentences; a bare `name: value` is left to the assignment detector."""
    text = doc.text
    sentence, haystack = doc.caseless(_SENTENCE)
    out: list[Candidate] = []
    for hit_start, _ in doc.hits:
        if hit_start > 0 and (text[hit_start - 1].isalnum() or text[hit_start - 1] == "_"):
            continue
        match = sentence.match(haystack, hit_start)
        if match is None:
            continue
        keyword, clause, op, quote, _ = match.groups()
        value = text[match.start(5) : match.end(5)]
        if op in (":", "=") and clause is None:
            continue
        if keyword.lower() == "key" and _qualified_key(text, hit_start):
            continue  # a cache key, a primary key, a sort key: not a credential
        password = keyword.lower().startswith("p")
        pin = keyword.lower() == "pin"
        words = rx(r"[a-z]{3,12}(?: [a-z]{3,12}){4,11}").match(text, match.start(5)) if password else None
        if words and passphrase_like(words.group(0), 5):  # "the passphrase is maple otter cobalt quartz falcon"
            out.append((match.start(), "password-sentence", words.group(0)))
        elif password and (_spoken_password_ok(value, bool(quote), pin) or run_together(value.rstrip(".,;:!?)]"))):
            out.append((match.start(), "password-sentence", value))
        elif not password and _spoken_token_ok(value):
            out.append((match.start(), "secret-sentence", value))
    return out


def _qualified_key(text: str, at: int) -> bool:
    """Whether the word before `key` at `at` makes it a data structure's or a cache's key."""
    before = text[max(0, at - 24) : at].rstrip(" \t_-").rsplit(None, 1)[-1:] if at else []
    return bool(before) and before[0].lower().strip("`*_(") in KEY_QUALIFIER_NOT


def _spoken_password_ok(value: str, quoted: bool, pin: bool = False) -> bool:
    """A password named in prose: quoted, or not a plain word (prose says "is stored", "is rotated")."""
    value = value.rstrip(".,;:!?)]") if not quoted else value
    if value.isdigit():
        return shapes.secret_digits(value, 4 if pin else 6)
    if len(value) < 6 or value.lower() in shapes.PLACEHOLDER_VALUES or value.lower() in SCHEMA_WORDS:
        return False
    if value[0] in "$%<{/" or "://" in value or shapes.env_name(value) or shapes.is_placeholder(value):
        return False
    if "1password" in value.lower() or rx(r"[0-9:./\-]+").fullmatch(value):
        return False
    if quoted or passphrase_like(value, 4):
        return True
    return not shapes.word_like(value) and shapes.char_classes(value) >= 2


def _spoken_token_ok(value: str) -> bool:
    value = value.rstrip(".,;:!?)]")
    if not value or value[0] in "$%<{" or "://" in value or shapes.env_name(value):
        return False
    return shapes.token_like(value) and not shapes.digest_like(value)


# Password nouns in other languages (English ones have their own sentence forms above).
_FOREIGN_NOUNS = (
    r"(?:passwort|kennwort|mot de passe|contraseña|senha|wachtwoord|lösenord|hasło|пароль"
    r"|密码|密碼|パスワード|비밀번호)"
)
# (detector, gate, expression): the expression runs only when the lower-cased note holds one of the
# gate's substrings. Group 1 is an optional quote, group 2 the value.
_PASS = words("pass")
_PROSE_FORMS = (
    # "Zx9!kLm2 is the password", "`…` was our staging password"
    (
        "password-sentence",
        (_PASS, words("is_the was_the is_my was_my is_our was_our is_your is_his is_her is_their", "_")),
        r"(?<![^\s\"'`(])([\"'`]?)([^\s\"'`]{6,128})\1[ \t]{1,4}(?:is|was)[ \t]{1,4}"
        r"(?:the|my|our|your|his|her|their)[ \t]{1,4}(?:[a-z]{1,20}[ \t]{1,4}){0,2}pass(?:word|phrase)\b",
    ),
    # "changed the root password to Zx9!kLm2"
    (
        "password-sentence",
        (_PASS, words("changed reset set updated rotated")),
        r"\b(?:changed|reset|set|updated|rotated)[ \t]{1,4}(?:the[ \t]{1,4}|my[ \t]{1,4}|our[ \t]{1,4})?"
        r"(?:[a-z]{1,20}[ \t]{1,4}){0,2}pass(?:word|phrase)[ \t]{1,4}to[ \t]{1,4}([\"'`]?)([^\s\"'`]{6,128})",
    ),
    # "use Zx9!kLm2 as the password", "log in with password Zx9!kLm2"
    (
        "password-sentence",
        (_PASS, words("use_", "_")),
        r"\buse[ \t]{1,4}([\"'`]?)([^\s\"'`]{6,128})\1[ \t]{1,4}as[ \t]{1,4}"
        r"(?:the[ \t]{1,4}|a[ \t]{1,4})?(?:[a-z]{1,20}[ \t]{1,4}){0,2}pass(?:word|phrase)\b",
    ),
    (
        "password-sentence",
        (_PASS | words("pw"), words("with_ using_ via_", "_")),
        r"\b(?:with|using|via)[ \t]{1,4}(?:the[ \t]{1,4})?(?:password|passphrase|pwd|pw)"
        r"[ \t]{1,4}([\"'`]?)([^\s\"'`]{6,128})",
    ),
    # "Passwort ist …", "mot de passe : …", "密码是…", "パスワードは…"
    (
        "password-sentence",
        (
            words(
                "passwort kennwort mot_de_passe contraseña senha wachtwoord lösenord hasło пароль "
                "密码 密碼 パスワード 비밀번호",
                "_",
            ),
        ),
        r"" + _FOREIGN_NOUNS + r"[^\n:=：]{0,30}?(?:[ \t]{1,4}(?:ist|lautet|est|es|é|is|är|jest)"
        r"[ \t]{1,4}|[ \t]{0,4}[:=：][ \t]{0,4}|是|は|는[ \t]{0,4})([\"'`「]?)([!#-&(-_a-~]{6,128})",
    ),
    # "login: admin / Zx9!kLm2", "credentials — deploy:Zx9!kLm2"
    (
        "credential-pair",
        (words("cred login user"), words("/ :")),
        r"\b(?:creds|credentials|login|user(?:name)?[ \t]{0,2}/[ \t]{0,2}pass(?:word)?)\b"
        r"[ \t]{0,4}(?:[:=\-–—]|is|are)[ \t]{0,4}()[^\s/:\"'`]{1,64}[ \t]{0,2}[/:][ \t]{0,2}([^\s\"'`]{6,128})",
    ),
    # ~/.netrc: machine host login me password …
    (
        "netrc-password",
        (words("machine"), words("password")),
        r"(?:^|[ \t])machine[ \t]{1,8}[^\s]{1,253}[ \t\n]{1,8}(?:login[ \t]{1,8}[^\s]{1,253}"
        r"[ \t\n]{1,8})?password[ \t]{1,8}()([^\s]{1,256})",
    ),
    # sshpass -p '…', docker login -p …, mysql -p…
    (
        "cli-password",
        (words("_-p", "_"), words("sshpass login mysql")),
        r"\b(?:sshpass|(?:docker|podman|helm[ \t]{1,4}registry)[ \t]{1,4}login|mysql|mysqladmin|mysqldump)"
        r"[^\n]{0,120}?[ \t]-p(?:[ \t]{1,4})?([\"']?)([^\s\"'-][^\s\"']{3,255})\1",
    ),
)


def _prose_forms(doc: Doc) -> list[Candidate]:
    """Passwords in other sentence shapes and languages, credential pairs, ~/.netrc, `-p` flags."""
    lowered = doc.lowered
    out: list[Candidate] = []
    for detector, gate, pattern in _PROSE_FORMS:
        if not all(any(word in lowered for word in group) for group in gate):
            continue
        compiled, haystack = doc.caseless(pattern)
        # The English sentence forms hold their `password` on the line they match: only lines with a
        # keyword are searched, not the whole note.
        spans = doc.hit_lines if detector == "password-sentence" and "pass" in gate[0] else [(0, 0, len(haystack))]
        matches = (match for _, start, end in spans for match in compiled.finditer(haystack, start, end))
        for match in matches:
            quote, value = match.group(1), doc.text[match.start(2) : match.end(2)]
            if detector in ("netrc-password", "cli-password"):
                ok = credential_ok(value) and value[0] not in "$<{" and not rx(r"[0-9:.]+").fullmatch(value)
            elif detector == "credential-pair":
                ok = credential_ok(value) and _spoken_password_ok(value, False)
            else:
                ok = _spoken_password_ok(value, bool(quote))
            if ok:
                out.append((match.start(), detector, value))
    return out


# Secrets without a prefix of their own, recognised by their shape near a word that names the service:
# (detector, context words in lower case, expression, minimum character classes, minimum entropy).
_CONTEXT_SHAPES = (
    (
        "aws-secret-access-key",
        ("aws", "akia", "asia", "secret_access_key", "secretaccesskey"),
        r"(?<![a-z])aws(?![a-rt-z])|akia|asia[a-z0-9]{16}|secret_?access_?key",
        r"(?<![A-Za-z0-9/+_\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])",
        3,
        4.0,
    ),
    (
        "twilio-auth-token",
        ("twilio",),
        r"twilio",
        r"(?<![A-Za-z0-9])[a-f0-9]{32}(?![A-Za-z0-9])",
        2,
        3.2,
    ),
    (
        "mailgun-key",
        ("mailgun",),
        r"mailgun",
        r"(?<![A-Za-z0-9])[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}(?![A-Za-z0-9])",
        2,
        3.2,
    ),
)


def _context_shapes(doc: Doc) -> list[Candidate]:
    """Shape matches on lines within three lines of a word that names the service."""
    out: list[Candidate] = []
    lowered = doc.lowered
    for detector, literals, context, pattern, classes, entropy in _CONTEXT_SHAPES:
        if not any(word in lowered for word in literals):
            continue
        if len(lowered) == len(doc.text):
            mentions = rx(context).finditer(lowered)
        else:
            mentions = shapes.compiled(context, re.IGNORECASE | re.MULTILINE).finditer(doc.text)
        near: set[int] = set()
        for mention in mentions:
            index = doc.line_of(mention.start()) - 1
            near.update(range(max(0, index - 3), min(len(doc.lines), index + 4)))
        for index in sorted(near):
            line = doc.lines[index][:4096]
            for match in rx(pattern).finditer(line):
                value = match.group(0)
                word_start = max(line.rfind(" ", 0, match.start()), line.rfind("(", 0, match.start()))
                if "://" in line[word_start + 1 : match.start()]:
                    continue  # part of a URL's path: an id in an address, not a key
                if (
                    shapes.char_classes(value) >= classes
                    and "EXAMPLE" not in value
                    and shapes.shannon_entropy(value) >= entropy
                    and not shapes.is_placeholder(value)
                    and not shapes.is_sequential(value)
                ):
                    out.append((doc.starts[index] + match.start(), detector, value))
    return out


FINDERS = (_sentences, _prose_forms, _context_shapes)
