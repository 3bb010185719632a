"""The secret gate: one scanner for every reader of the vault (brief, doctor, handoffs, notes, recall).

Private notes are where people paste credentials, so every source is scanned before anything of it is
shown. A finding names the line, a stable detector id and a short fingerprint (a SHA-256 prefix of the
value), never the value itself, so a notice, a log line or an exception can never leak what it found.

Detectors: token formats with their prefixes (`secret_rules`), private key blocks, service-account
JSON, credentials in URLs and `curl -u`, `Authorization` headers, secret-named assignments in ENV,
YAML, JSON, TOML and code, Kubernetes Secrets, passwords in sentences, shapes near a service's name
(AWS, Twilio, Mailgun), and detect-secrets for the few formats it knows that we do not.

Cost matters because this runs on the session-start hook's cold path, where a clean prose note is the
common case. Every detector is gated by literal substrings (C-speed `in`) before any expression runs;
expressions are compiled on first use, written with literal anchors and bounded repetition (a 1 MiB
line or 100,000 short lines scan in bounded time), and case-blind ones run on the lower-cased text
instead of using IGNORECASE, which compiles several times slower. detect-secrets (a few hundred
milliseconds to import) is imported only for a line shaped like a key that only its plugins know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from continuity import secret_rules as rules
from continuity.secret_rules import words

ALLOWLIST_PRAGMA = "pragma: allowlist secret"
SCAN_ERROR = "scan-error"
# Fingerprints of values that vendors and standards publish in their documentation (the jwt.io
# sample token, Stripe's and GitHub's documented example keys, RFC 6749's client credentials, the
# Azure storage emulator's key):
# examples, not leaks. Kept as fingerprints so that this file holds no token-shaped text. AWS's
# documentation keys are caught by their EXAMPLE suffix.
KNOWN_EXAMPLES = frozenset(
    {
        "7f75367e7881",  # jwt.io's sample token
        "2cafc0970149",  # Stripe's documented test key
        "f2d6ca165150",  # Stripe's older documented test key
        "3543c50b0cb9",  # GitHub's documented token example (ghp_)
        "bc3ae723f57c",  # the same example as an OAuth token (gho_)
        "ca7459e2b267",  # RFC 6749's client credentials in a Basic header
        "0011cc25eb43",  # the Azure storage emulator's published account key
        "900e6c2bf8ce",  # the same, as matched with its AccountKey= prefix
    }
)


@dataclass(frozen=True, order=True)
class Finding:
    """Where a secret-like value sits and what recognised it; the value itself is never kept."""

    line: int
    detector: str
    fingerprint: str

    def describe(self) -> str:
        return f"line {self.line}: {self.detector} (fingerprint {self.fingerprint})"


def fingerprint(value: str) -> str:
    """First 12 hex digits of SHA-256: enough to tell findings apart, useless for recovering the value."""
    import hashlib

    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


class _Doc:
    """The text plus a lazily built line index, shared by every detector of one scan."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._lines: list[str] | None = None
        self._lowered: str | None = None
        self._hits: list[tuple[int, int]] | None = None

    @property
    def lowered(self) -> str:
        """The text in lower case, for case-blind literal checks (offsets may differ: see `hits`)."""
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    @property
    def hits(self) -> list[tuple[int, int]]:
        """Spans of secret keywords (pass, pwd, pw, secret, token, key, credential, creds), any case.

        Searched in the lower-cased text when lower-casing kept every offset (always for ASCII),
        otherwise case-blind in the text itself; either way the spans are offsets into `text`.
        """
        if self._hits is None:
            words = r"pass|pwd|pw|secret|token|key|credential|creds"
            if len(self.lowered) == len(self.text):
                found = rules.compiled(words).finditer(self.lowered)
            else:
                found = rules.compiled(words, re.IGNORECASE).finditer(self.text)
            self._hits = [m.span() for m in found]
        return self._hits

    def caseless(self, pattern: str) -> tuple[re.Pattern[str], str]:
        """A case-blind matcher for a lower-case `pattern`, and the text to run it on.

        Matching the lower-cased text with a case-sensitive expression gives the same offsets as
        matching the text itself, and compiles far faster than IGNORECASE with non-ASCII classes;
        when lower-casing moved offsets (rare non-ASCII), IGNORECASE on the text is the fallback.
        """
        if len(self.lowered) == len(self.text):
            return rules.compiled(pattern, re.MULTILINE), self.lowered
        return rules.compiled(pattern, re.MULTILINE | re.IGNORECASE), self.text

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            from itertools import accumulate

            self._starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]
        return self._starts

    def line_of(self, offset: int) -> int:
        """1-based line number of a character offset (lines end at LF; a CR before it is content)."""
        from bisect import bisect_right

        return bisect_right(self.starts, offset)


Candidate = tuple[int, str, str]  # (offset, detector, value)


def scan_text(text: str) -> list[Finding]:
    """Every secret-like value in `text`, sorted, at most one finding per (line, detector).

    Never raises: a detector that fails on some input yields a `scan-error` finding on line 1, so the
    source is left out (fail closed) instead of being shown unscanned.
    """
    doc = _Doc(text)
    found: list[Candidate] = []
    for finder in _FINDERS:
        try:
            found.extend(finder(doc))
        except Exception:
            found.append((0, SCAN_ERROR, f"{SCAN_ERROR}:{finder.__name__}"))
    return _findings(doc, found)


def _findings(doc: _Doc, found: list[Candidate]) -> list[Finding]:
    if not found:
        return []
    allowed = _allowlisted_lines(doc)
    seen: dict[tuple[int, str], Finding] = {}
    for offset, detector, value in sorted(found):
        line = doc.line_of(offset)
        if line in allowed and detector != SCAN_ERROR:
            continue
        key = (line, detector)
        if key not in seen:
            mark = fingerprint(value)
            if mark not in KNOWN_EXAMPLES:
                seen[key] = Finding(line, detector, mark)
    return sorted(seen.values())


def _allowlisted_lines(doc: _Doc) -> frozenset[int]:
    if "allowlist" not in doc.lowered:
        return frozenset()
    return frozenset(number for number, line in enumerate(doc.lines, start=1) if ALLOWLIST_PRAGMA in line.lower())


# --- detect-secrets, behind one adapter -------------------------------------------------------------

# Plugins whose formats the project's own rules do not cover; everything else is ours, so the heavy
# import is paid only for the rare line that names one of these services.
DETECT_SECRETS_PLUGINS = (
    "ArtifactoryDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "SoftlayerDetector",
)
_DS_DETECTORS = {
    "Artifactory Credentials": "artifactory-token",
    "Cloudant Credentials": "cloudant-credentials",
    "Discord Bot Token": "discord-bot-token",
    "IBM Cloud IAM Key": "ibm-cloud-iam-key",
    "IBM COS HMAC Credentials": "ibm-cos-hmac-key",
    "SoftLayer Credentials": "softlayer-api-key",
}
# Shapes of what the adapter's plugins look for, slightly wider than theirs: the whole note is
# searched for them (C speed), and only lines with a match go to detect-secrets.
_DS_SHAPES = (
    r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",  # Discord bot token
    r"AKC[A-Za-z0-9]{10}|AP[0-9A-F][A-Za-z0-9]{8}",  # Artifactory
)
# IBM Cloud, IBM COS, SoftLayer and Cloudant keys follow a name that says so.
_DS_NAMES = ("ibm", "softlayer", "cloudant", "hmac")


def _detect_secrets_candidates(doc: _Doc) -> list[Candidate]:
    text = doc.text
    wanted: set[int] = set()
    for shape in _DS_SHAPES:
        wanted.update(doc.line_of(m.start()) for m in _rx(shape).finditer(text))
    if any(name in doc.lowered for name in _DS_NAMES):
        long_run = _rx(r"[A-Za-z0-9_\-]{24}")
        for number, line in enumerate(doc.lines, start=1):
            lowered = line.lower()
            if (
                any(name in lowered for name in _DS_NAMES)
                and any(word in lowered for word in ("key", "pwd", "pass", "token"))
                and long_run.search(line)
            ):
                wanted.add(number)
    if not wanted:
        return []
    lines = [(number, doc.lines[number - 1].rstrip("\r")) for number in sorted(wanted)]
    return [(doc.starts[number - 1], detector, value) for number, detector, value in detect_secrets_scan(lines)]


def detect_secrets_scan(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """Run detect-secrets' line plugins on in-memory lines: (line number, detector id, value).

    Uses `detect_secrets.core.scan._process_line_based_plugins`, the private loop behind `scan_file`
    (pinned to detect-secrets 1.5.0; tests exercise it), inside `transient_settings` so the process-wide
    settings are restored afterwards. Its heuristic filters are off: they drop real secrets, and the
    project's own placeholder checks run on our rules instead. Each line is scanned alone, so a
    plugin's context is that line. Not thread-safe: detect-secrets' settings are process-wide.
    """
    if not lines:
        return []
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import transient_settings

    config = {
        "plugins_used": [{"name": name} for name in DETECT_SECRETS_PLUGINS],
        "filters_used": [],
    }
    out: list[tuple[int, str, str]] = []
    with transient_settings(config):
        for number, line in lines:
            for secret in _process_line_based_plugins(lines=[(1, line)], filename="note.md"):
                value = secret.secret_value or ""
                detector = _DS_DETECTORS.get(secret.type, "detect-secrets")
                out.append((number, detector, value))
    return out


# --- detectors that need structure around the value ------------------------------------------------


def _rx(pattern: str) -> re.Pattern[str]:
    """Compile on first use (multi-line mode: `^` is a line start); the rule module keeps the cache."""
    return rules.compiled(pattern, re.MULTILINE)


def _tokens(doc: _Doc) -> list[Candidate]:
    return rules.token_candidates(doc.text)


_PEM_HEADER = r"BEGIN [A-Z0-9 ]{0,30}?PRIVATE KEY(?: BLOCK)? ?-{3,5}"
# After the header: escaped or real line breaks, up to four `Name: value` header lines (Proc-Type,
# DEK-Info, Version, Comment), then at least 40 characters of base64 body. A header alone, as prose
# mentions it, is not a key.
_PEM_BODY = (
    r"(?:\\[nr]|[ \t\r\n>\"'|]){0,16}(?:[A-Za-z][A-Za-z0-9-]{1,30}: ?[^\n\\]{0,200}(?:\\n|\r?\n)[ \t>]{0,16}){0,4}"
    r"(?:\\[nr]|[ \t\r\n>]){0,16}[A-Za-z0-9+/=]{40}"
)


def _private_keys(doc: _Doc) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    if "PRIVATE KEY" in text:
        body = _rx(_PEM_BODY)
        for match in _rx(_PEM_HEADER).finditer(text):
            start = match.start()
            if not text[max(0, start - 6) : start].rstrip(" ").endswith("----"):
                continue
            tail = body.match(text, match.end(), min(len(text), match.end() + 1200))
            if tail:
                out.append((start, "private-key", text[start : tail.end()]))
    if "Private-Lines:" in text:
        for match in _rx(r"Private-Lines: ?[0-9]{1,4}\r?\n[A-Za-z0-9+/=]{40}").finditer(text):
            out.append((match.start(), "putty-private-key", match.group(0)))
    return out


def _service_accounts(doc: _Doc) -> list[Candidate]:
    text = doc.text
    if "service_account" not in text or "private_key" not in text:
        return []
    pattern = _rx(r"\"private_key\"[ \t]{0,4}:[ \t]{0,4}\"(-----BEGIN[^\"]{40,8000})\"")
    return [(m.start(), "gcp-service-account", m.group(1)) for m in pattern.finditer(text)]


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_PASSWORD_WORDS = words(
    "password pass passwd pwd pw secret changeme token apikey api_key x xx xxx user username pass123 "
    "mypassword yourpassword foo bar baz private guest admin root test"
)


def _url_credentials(doc: _Doc) -> list[Candidate]:
    """`scheme://user:password@host`, with or without the user name."""
    text = doc.text
    if "://" not in text or "@" not in text:
        return []
    auth = _rx(r"([^\s:/?#@\"'<>\[\]{}`|\\]{0,128}):([^\s/?#\"'<>`|\\]{1,256})@[A-Za-z0-9\[_%-]")
    out: list[Candidate] = []
    position = text.find("://")
    while position >= 0:
        begin = position
        while begin > 0 and position - begin < 32 and text[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        match = auth.match(text, position + 3) if position - begin >= 2 and text[begin].isalpha() else None
        if match and _credential_ok(match.group(2)):
            out.append((begin, "url-credentials", match.group(2)))
        position = text.find("://", position + 3)
    return out


def _credential_ok(password: str) -> bool:
    """A password in a URL or `curl -u` that is a value, not a reference or a filler."""
    if password.lower() in _URL_PASSWORD_WORDS or password[0] in "$%*":
        return False
    if rules.is_placeholder(password) or set(password) <= {"*", "x", "X", ".", "-", "_"}:
        return False
    if password.isdigit() and len(password) <= 5:
        return False  # a port, or a uid:gid pair
    return len(password) >= 6 or rules.char_classes(password) >= 3


def _curl_credentials(doc: _Doc) -> list[Candidate]:
    text = doc.text
    if "curl" not in doc.lowered or ("-u" not in text and "--user" not in text):
        return []
    pattern = _rx(r"(?:^|[ \t])(?:-u|--user)(?:[ \t]{1,8}|=)[\"']?([^\s\"':]{0,128}):([^\s\"']{1,256})")
    out: list[Candidate] = []
    for match in pattern.finditer(text):
        password = match.group(2)
        if _credential_ok(password) and not (password.isdigit() and match.group(1).isdigit()):
            out.append((match.start(), "curl-credentials", password))
    return out


def _auth_headers(doc: _Doc) -> list[Candidate]:
    """`Bearer <opaque token>` and `Basic <base64 of user:password>`."""
    text = doc.text
    out: list[Candidate] = []
    if "earer" in text:
        for match in _rx(r"[Bb]earer[ \t]{1,8}([A-Za-z0-9._~+/=-]{16,4096})").finditer(text):
            value = match.group(1)
            pieces = _rx(r"[._~+/=-]").split(value)
            if rules.token_like(max(pieces, key=len)) or (rules.token_like(value) and len(value) >= 24):
                out.append((match.start(), "bearer-token", value))
    if "asic " in text:
        for match in _rx(r"[Bb]asic[ \t]{1,8}([A-Za-z0-9+/]{8,512}={0,2})").finditer(text):
            user, colon, password = (rules.b64_text(match.group(1)) or "").partition(":")
            if colon and user and password and _credential_ok(password):
                out.append((match.start(), "basic-auth-header", match.group(1)))
    return out


# Secret-named keys in ENV, YAML, JSON, TOML and code. The name is found from a keyword inside it and
# split into words (snake, kebab, dotted, camelCase); the last secret word decides, and only
# environment-like words may follow it (`api_key_prod` yes, `password_file` and `token_url` no).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_PASSWORD_WORDS = words("password passwd pwd pass passphrase passcode pw")
_SECRET_WORDS = _PASSWORD_WORDS | words(
    "secret token apikey credential credentials creds secretkey privatekey accesskey authkey clientsecret"
)
_KEY_QUALIFIER_NOT = words(
    "primary foreign sort partition public pub idempotency cache map dict lookup unique composite row object s3 "
    "registry translation i18n react hot short sign group host hash the a ssh gpg pgp deploy license routing "
    "shard index field column json yaml self this cls my new old item entry next prev last first sorting"
)
_TRAILING_OK = words(
    "prod production dev development staging stage test live local qa uat old new primary secondary backup value "
    "raw plain b64 base64 encoded default main admin root ro rw readonly write read v1 v2 v3 1 2 3 current next "
    "previous prev override"
)
_BOOLEAN_LEADS = words("is has use no require show enable disable allow min max")


@lru_cache(maxsize=512)
def _secret_name(name: str) -> str:
    """Classify a name: "password", "key", "secret", or "" when it does not name a secret.

    The last secret word of the name decides; passwords are chosen by people, keys and secrets are
    generated, and the value checks differ accordingly."""
    words = [w.lower() for w in _rx(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+").findall(name)]
    for index in range(len(words) - 1, -1, -1):
        word = words[index]
        joined = "".join(words[max(0, index - 1) : index + 1])
        secretish = word in _SECRET_WORDS or joined in _SECRET_WORDS
        if word == "key" and not secretish:
            secretish = index > 0 and words[index - 1] not in _KEY_QUALIFIER_NOT
        if not secretish:
            if word not in _TRAILING_OK:
                return ""
            continue
        if words[0] in _BOOLEAN_LEADS or any(w in ("public", "pub", "publishable") for w in words):
            return ""
        if word in _PASSWORD_WORDS or joined in _PASSWORD_WORDS:
            return "password"
        return "key" if word == "key" else "secret"
    return ""


_TAIL = (
    r"[\"'\]*_]{0,4}[ \t]{0,8}(?P<op>:=|=>|==|!=|=|:(?!:)|(?<=[ \t])\|(?=[ \t]))[ \t*_]{0,8}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\r\n]{0,512})(?P=q)|(?P<uv>[^\s\"'`,;|]{1,512}))"
)
_FLAG_TAIL = r"[ \t]{1,4}(?:([\"'])([^\"'\r\n]{1,512})\1|([^\s\"'`,;|&]{1,512}))"


def _assignments(doc: _Doc) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    resume = 0
    name_run = _rx(r"[A-Za-z0-9_.\-]{0,64}")
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
        assigned = _assigned_after(text, end, flag=name.startswith("--"))
        if assigned is None:
            continue
        value, quoted, resume = assigned
        if name.lower() in _SECRET_WORDS or name.lower() == "key":
            begin, name = _with_word_before(text, begin, name)  # "API key: …", "Stripe token = …"
        kind = _secret_name(name)
        if sealed and value.startswith("Ag") and len(value) > 100:
            continue  # a SealedSecret's ciphertext is meant to be committed
        if kind and _assigned_value_ok(value, quoted, kind):
            out.append((begin, "secret-assignment", value))
    return out


def _with_word_before(text: str, begin: int, name: str) -> tuple[int, str]:
    """Extend a one-word name by the word before it on the same line, when there is one."""
    if begin < 2 or text[begin - 1] not in " \t":
        return begin, name
    start = begin - 1
    while start > 0 and begin - start < 32 and text[start - 1] in _NAME_CHARS:
        start -= 1
    return (start, text[start:begin] + name) if start < begin - 1 else (begin, name)


_ANNOTATED_TAIL = (
    r"[\"'\]]{0,2}[ \t]{0,4}:[ \t]{0,4}[A-Za-z_][A-Za-z0-9_.\[\], |]{0,60}?[ \t]{1,4}=(?!=)[ \t]{0,4}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\r\n]{0,512})(?P=q)|(?P<uv>[^\s\"'`,;]{1,512}))"
)


def _assigned_after(text: str, end: int, flag: bool) -> tuple[str, bool, int] | None:
    """(value, was it quoted, where it ends) when an assignment operator follows a name at `end`.

    Also reads through a type annotation (`password: str = "…"`, `val token: String = "…"`) and, for
    command-line flags, a value after a space (`--password hunter2`).
    """
    ahead = text[end : end + 16].lstrip("\"']*_ \t")[:1]
    match = None
    if ahead and ahead in ":=|":  # cheap test first: prose ("key points") has no operator here
        match = _rx(_ANNOTATED_TAIL).match(text, end) or _rx(_TAIL).match(text, end)
    if match and match.groupdict().get("op") not in ("==", "!="):
        quoted = match.group("q") is not None
        return (match.group("qv") if quoted else match.group("uv")), quoted, match.end()
    if flag:
        match = _rx(_FLAG_TAIL).match(text, end)
        if match:
            quoted = match.group(1) is not None
            return (match.group(2) if quoted else match.group(3)), quoted, match.end()
    return None


# Quoted words that are schema types or form-field names, not passwords.
_SCHEMA_WORDS = words("string text password hidden required optional secret number integer boolean object array")


def _assigned_value_ok(value: str, quoted: bool, kind: str) -> bool:
    """Is the value assigned to a secret-named key a literal secret (not a reference or a filler)?"""
    password = kind == "password"
    value = value.strip()
    if not quoted:
        value = value.rstrip(".)]}")
    if len(value) < (6 if password else 8) or value.lower() in rules.PLACEHOLDER_VALUES:
        return False
    if value[0] in "$%" or (not quoted and value[0] in "!&@#|>*"):
        return False  # a reference, a format string, a YAML tag, anchor or block, a comment
    if rules.is_placeholder(value) or "://" in value or rules.env_name(value):
        return False
    if not quoted and any(c in value for c in "()[]{}"):
        return False  # code: a call, an index, a type
    if _rx(r"[0-9:./ TZ+\-]+").fullmatch(value):
        return False  # a number, a date, a version
    if rules.word_like(value):
        # A bare word is an identifier; a quoted one can be a (weak) password.
        return (
            quoted
            and password
            and len(value) >= 8
            and value.isalpha()
            and value.islower()
            and value not in _SCHEMA_WORDS
        )
    if not quoted and _rx(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+").fullmatch(value):
        return False  # attribute access in code: settings.DB_PASSWORD
    if _path_like(value) or _rx(r"[^@\s]+@[A-Za-z0-9-]+\.[A-Za-z.]+$").match(value):
        return False  # a path or an e-mail address
    if password:
        return rules.char_classes(value) >= 2 or rules.looks_random(value, 12)
    if kind == "key":
        return rules.token_like(value)
    return (rules.char_classes(value) >= 3 and len(value) >= 8) or rules.token_like(value)


def _path_like(value: str) -> bool:
    """A file path (`/run/secrets/db`, `~/.aws/credentials`, `C:\\keys`), not key material that
    happens to start with a slash: no segment of it looks generated."""
    if not (value[0] in "/~." or _rx(r"[A-Za-z]:\\").match(value)):
        return False
    return not any(rules.token_like(part) for part in _rx(r"[/\\]").split(value) if len(part) >= 16)


# "The password is …", "pw for staging: …", "the API token is …": secrets written in sentences.
_SENTENCE = (
    r"(pass(?:word|phrase|code)?|pwd|pw|token|api[ _-]?key|secret|key)\b"
    r"([ \t]{1,4}(?:for|to|of|on|at)[ \t]{1,4}[^.\n:=!?]{1,60}?|[ \t]{0,4}\([^)\n]{1,40}\))?"
    r"[ \t]{0,4}([ \t]is|[ \t]was|[ \t]remains|[ \t]will[ \t]be|[ \t](?:set|changed|reset)[ \t]to|=|:|->|→|—|–|[ \t]-)"
    r"[ \t]{1,4}(?:now[ \t]{1,4}|still[ \t]{1,4}|set[ \t]to[ \t]{1,4}|just[ \t]{1,4}|simply[ \t]{1,4})?"
    r"([\"'`“‘]?)([^\s\"'`”’]{4,256})"
)


def _sentences(doc: _Doc) -> list[Candidate]:
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
        password = keyword.lower().startswith("p")
        if password and _spoken_password_ok(value, bool(quote)):
            out.append((match.start(), "password-sentence", value))
        elif not password and _spoken_token_ok(value):
            out.append((match.start(), "secret-sentence", value))
    return out


def _spoken_password_ok(value: str, quoted: bool) -> bool:
    """A password named in prose: quoted, or not a plain word (prose says "is stored", "is rotated")."""
    value = value.rstrip(".,;:!?)]") if not quoted else value
    if len(value) < 6 or value.lower() in rules.PLACEHOLDER_VALUES or value.lower() in _SCHEMA_WORDS:
        return False
    if value[0] in "$%<{/" or "://" in value or rules.env_name(value) or rules.is_placeholder(value):
        return False
    if "1password" in value.lower() or _rx(r"[0-9:./\-]+").fullmatch(value):
        return False
    if quoted:
        return True
    return not rules.word_like(value) and rules.char_classes(value) >= 2


def _spoken_token_ok(value: str) -> bool:
    value = value.rstrip(".,;:!?)]")
    if not value or value[0] in "$%<{" or "://" in value or rules.env_name(value):
        return False
    return rules.token_like(value) and not rules.digest_like(value)


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


def _prose_forms(doc: _Doc) -> list[Candidate]:
    """Passwords in other sentence shapes and languages, credential pairs, ~/.netrc, `-p` flags."""
    lowered = doc.lowered
    out: list[Candidate] = []
    for detector, gate, pattern in _PROSE_FORMS:
        if not all(any(word in lowered for word in group) for group in gate):
            continue
        compiled, haystack = doc.caseless(pattern)
        for match in compiled.finditer(haystack):
            quote, value = match.group(1), doc.text[match.start(2) : match.end(2)]
            if detector in ("netrc-password", "cli-password"):
                ok = _credential_ok(value) and value[0] not in "$<{" and not _rx(r"[0-9:.]+").fullmatch(value)
            elif detector == "credential-pair":
                ok = _credential_ok(value) and _spoken_password_ok(value, False)
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
        r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
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


def _context_shapes(doc: _Doc) -> list[Candidate]:
    """Shape matches on lines within three lines of a word that names the service."""
    out: list[Candidate] = []
    lowered = doc.lowered
    for detector, literals, context, pattern, classes, entropy in _CONTEXT_SHAPES:
        if not any(word in lowered for word in literals):
            continue
        if len(lowered) == len(doc.text):
            mentions = _rx(context).finditer(lowered)
        else:
            mentions = rules.compiled(context, re.IGNORECASE | re.MULTILINE).finditer(doc.text)
        near: set[int] = set()
        for mention in mentions:
            index = doc.line_of(mention.start()) - 1
            near.update(range(max(0, index - 3), min(len(doc.lines), index + 4)))
        for index in sorted(near):
            for match in _rx(pattern).finditer(doc.lines[index][:4096]):
                value = match.group(0)
                if (
                    rules.char_classes(value) >= classes
                    and "EXAMPLE" not in value
                    and rules.shannon_entropy(value) >= entropy
                    and not rules.is_placeholder(value)
                    and not rules.is_sequential(value)
                ):
                    out.append((doc.starts[index] + match.start(), detector, value))
    return out


def _docker_auths(doc: _Doc) -> list[Candidate]:
    """`"auth": "<base64 of user:password>"` in a Docker or Podman config.json."""
    text = doc.text
    if '"auth"' not in text:
        return []
    out: list[Candidate] = []
    for match in _rx(r"\"auth\"[ \t]{0,4}:[ \t]{0,4}\"([A-Za-z0-9+/]{8,1024}={0,2})\"").finditer(text):
        user, colon, password = (rules.b64_text(match.group(1)) or "").partition(":")
        if colon and user and password and _credential_ok(password):
            out.append((match.start(), "docker-auth", match.group(1)))
    return out


def _jwk_private_keys(doc: _Doc) -> list[Candidate]:
    """A JSON Web Key with its private exponent `d` (a JWKS of public keys has none)."""
    text = doc.text
    if '"kty"' not in text or '"d"' not in text:
        return []
    pattern = _rx(r"\"d\"[ \t]{0,4}:[ \t]{0,4}\"([A-Za-z0-9_\-]{32,})\"")
    return [(m.start(), "jwk-private-key", m.group(1)) for m in pattern.finditer(text)]


def _kubernetes_secrets(doc: _Doc) -> list[Candidate]:
    """Values under `data:`/`stringData:` of a Kubernetes Secret (base64 is an encoding, not a lock).

    Works per YAML document (split at `---` and at Markdown fences), since `kubectl get -o yaml`
    prints `data:` before `kind: Secret`.
    """
    text = doc.text
    if "Secret" not in text or "ata" not in text:
        return []
    kind = _rx(r"^[ \t]*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?Secret\b")
    if not kind.search(text):
        return []
    out: list[Candidate] = []
    pending: list[Candidate] = []
    is_secret, block_indent, string_data = False, -1, False
    for index, line in enumerate(doc.lines):
        stripped = line.strip()
        if stripped.startswith(("---", "```", "~~~")):
            out.extend(pending if is_secret else ())
            pending, is_secret, block_indent = [], False, -1
            continue
        is_secret = is_secret or kind.match(line) is not None
        indent = len(line) - len(line.lstrip(" "))
        if block_indent >= 0 and stripped and (indent <= block_indent or stripped.startswith("}")):
            block_indent = -1
        head = stripped.replace('"', "").replace(" ", "")
        if head in ("data:", "stringData:", "data:{", "stringData:{"):
            block_indent, string_data = indent, head.startswith("stringData")
            continue
        if block_indent < 0 or ":" not in stripped:
            continue
        value = stripped.partition(":")[2].strip().rstrip(",").strip("\"'")
        if not value or rules.is_placeholder(value) or value[0] in "$<{|>":
            continue
        if (len(value) >= 6 and not rules.word_like(value)) if string_data else bool(rules.b64_bytes(value)):
            pending.append((doc.starts[index] + indent, "kubernetes-secret", value))
    out.extend(pending if is_secret else ())
    return out


_FINDERS = (
    _tokens,
    _private_keys,
    _service_accounts,
    _url_credentials,
    _curl_credentials,
    _auth_headers,
    _assignments,
    _sentences,
    _prose_forms,
    _context_shapes,
    _jwk_private_keys,
    _docker_auths,
    _kubernetes_secrets,
    _detect_secrets_candidates,
)
