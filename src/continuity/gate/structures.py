"""Secret detectors that recognise the structure around a value, not the value's own format.

A PEM private key, a service-account JSON file, `scheme://user:password@host`, `curl -u`, an
`Authorization` header, a Docker `auth` entry, a JSON Web Key with its private part, the `data:`
of a Kubernetes Secret, a session cookie or a Sentry DSN: in each, the surrounding syntax says "this
is a credential" and the value itself may be any string, so the checks here are about the container
first and the value second (a reference, a filler or a port is not a password). Each detector is
gated by a literal substring before any expression runs, since a clean prose note is the common case
on the startup path.
"""

from __future__ import annotations

from continuity.gate import shapes
from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words

_PEM_HEADER = r"BEGIN [A-Z0-9 ]{0,30}?PRIVATE KEY(?: BLOCK)? ?-{3,5}"
# After the header (and whatever else its line holds): escaped or real line breaks, up to four
# `Name: value` header lines (Proc-Type, DEK-Info, Version, Comment), then at least 40 characters of
# base64 body. A header alone, as prose mentions it, is not a key.
_PEM_BODY = (
    r"(?:[ \t][^\n]{0,120}(?=\r?\n))?"  # the rest of the header line: a comment or a pragma
    r"(?:\\[nr]|[ \t\r\n>\"'|]){0,16}(?:[A-Za-z][A-Za-z0-9-]{1,30}: ?[^\n\\]{0,200}(?:\\n|\r?\n)[ \t>]{0,16}){0,4}"
    r"(?:\\[nr]|[ \t\r\n>]){0,16}[A-Za-z0-9+/=]{40}"
)


def private_keys(doc: Doc) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    if "PRIVATE KEY" in text:
        body = rx(_PEM_BODY)
        for match in rx(_PEM_HEADER).finditer(text):
            start = match.start()
            if not text[max(0, start - 6) : start].rstrip(" ").endswith("----"):
                continue
            tail = body.match(text, match.end(), min(len(text), match.end() + 1200))
            if tail:
                out.append((start, "private-key", text[start : tail.end()]))
    if "Private-Lines:" in text:
        for match in rx(r"Private-Lines: ?[0-9]{1,4}\r?\n[A-Za-z0-9+/=]{40}").finditer(text):
            out.append((match.start(), "putty-private-key", match.group(0)))
    return out


def _service_accounts(doc: Doc) -> list[Candidate]:
    """A service-account key file's `private_key`, and its `private_key_id`: the id alone opens nothing,
    but it names the key (GitHub's secret scanning reports it too), and a file pasted with its key cut
    out still says which key to revoke."""
    text = doc.text
    out: list[Candidate] = []
    if "service_account" in text and "private_key" in text:
        # A key with its body (an elided one, `-----BEGIN…\\n...\\n-----END…`, holds nothing).
        pattern = rx(
            r"\"private_key\"[ \t]{0,4}:[ \t]{0,4}\""
            r"(-----BEGIN[A-Z ]{0,40}-----(?:\\[nr]){0,4}[A-Za-z0-9+/=]{40}[^\"]{0,8000})\""
        )
        out.extend((m.start(), "gcp-service-account", m.group(1)) for m in pattern.finditer(text))
    if "private_key_id" in doc.lowered:
        matcher, haystack = doc.caseless(
            r"private_key_id[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?([0-9a-f]{40})(?![0-9a-z])"
        )
        for m in matcher.finditer(haystack):
            value = text[m.start(1) : m.end(1)]
            if not shapes.is_placeholder(value):
                out.append((m.start(), "gcp-private-key-id", value))
    return out


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_PASSWORD_WORDS = words(
    "password pass passwd pwd pw secret changeme token apikey api_key x xx xxx user username pass123 "
    "mypassword yourpassword foo bar baz private guest admin root test"
)


def _url_credentials(doc: Doc) -> list[Candidate]:
    """`scheme://user:password@host`, with or without the user name."""
    text = doc.text
    if "://" not in text or "@" not in text:
        return []
    # The password may hold `?` and `#`: people paste them raw although a URL should encode them.
    auth = rx(r"([^\s:/?#@\"'<>\[\]{}`|\\]{0,128}):([^\s/\"'<>`|\\]{1,256})@[A-Za-z0-9\[_%-]")
    out: list[Candidate] = []
    position = text.find("://")
    while position >= 0:
        begin = position
        while begin > 0 and position - begin < 32 and text[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        match = auth.match(text, position + 3) if position - begin >= 2 and text[begin].isalpha() else None
        if match and credential_ok(match.group(2)):
            out.append((begin, "url-credentials", match.group(2)))
        position = text.find("://", position + 3)
    return out


def credential_ok(password: str) -> bool:
    """A password in a URL or `curl -u` that is a value, not a reference or a filler."""
    if password.lower() in _URL_PASSWORD_WORDS or password[0] in "$%*":
        return False
    if shapes.filler(password) or set(password) <= {"*", "x", "X", ".", "-", "_"}:
        return False
    if password.isdigit() and len(password) <= 5:
        return False  # a port, or a uid:gid pair
    return len(password) >= 6 or shapes.char_classes(password) >= 3


def _curl_credentials(doc: Doc) -> list[Candidate]:
    text = doc.text
    if "curl" not in doc.lowered or ("-u" not in text and "--user" not in text):
        return []
    pattern = rx(r"(?:^|[ \t])(?:-u|--user)(?:[ \t]{1,8}|=)[\"']?([^\s\"':]{0,128}):([^\s\"']{1,256})")
    out: list[Candidate] = []
    for match in pattern.finditer(text):
        password = match.group(2)
        if credential_ok(password) and not (password.isdigit() and match.group(1).isdigit()):
            out.append((match.start(), "curl-credentials", password))
    return out


def _auth_headers(doc: Doc) -> list[Candidate]:
    """`Bearer <opaque token>` and `Basic <base64 of user:password>`."""
    text = doc.text
    out: list[Candidate] = []
    if "earer" in text:
        # `%`: Twitter's bearer tokens come URL-encoded (`%2B`, `%3D`) after a run of `A`.
        for match in rx(r"[Bb]earer[ \t]{1,8}([A-Za-z0-9._~+/=%-]{16,4096})").finditer(text):
            value = match.group(1)
            pieces = rx(r"%[0-9A-Fa-f]{2}|[._~+/=%-]").split(value)
            if shapes.token_like(max(pieces, key=len)) or (shapes.token_like(value) and len(value) >= 24):
                out.append((match.start(), "bearer-token", value))
    if "asic " in text:
        for match in rx(r"[Bb]asic[ \t]{1,8}([A-Za-z0-9+/]{8,512}={0,2})").finditer(text):
            user, colon, password = (shapes.b64_text(match.group(1)) or "").partition(":")
            if colon and user and password and credential_ok(password):
                out.append((match.start(), "basic-auth-header", match.group(1)))
    return out


def _docker_auths(doc: Doc) -> list[Candidate]:
    """`"auth": "<base64 of user:password>"` in a Docker or Podman config.json."""
    text = doc.text
    if '"auth"' not in text:
        return []
    out: list[Candidate] = []
    for match in rx(r"\"auth\"[ \t]{0,4}:[ \t]{0,4}\"([A-Za-z0-9+/]{8,1024}={0,2})\"").finditer(text):
        user, colon, password = (shapes.b64_text(match.group(1)) or "").partition(":")
        if colon and user and password and credential_ok(password):
            out.append((match.start(), "docker-auth", match.group(1)))
    return out


# Cookies that hold a login: sessions, auth and remember-me tokens, Google's *SID (not CSRF tokens).
_SESSION_COOKIE = r"(?:[a-z0-9_.\-]{0,40}(?:sess|auth|token|remember|logged_in|login|sid)[a-z0-9_.\-]{0,40}|jwt|sso)"
# Outside a Cookie header, only names that are a session cookie's and nothing else's.
_BARE_SESSION = (
    r"(?<![a-z0-9_.\-])(sessionid|sessid|phpsessid|jsessionid|asp\.net_sessionid|connect\.sid|laravel_session"
    r"|ci_session|_[a-z0-9]{1,32}_session|[a-z0-9_.\-]{0,40}session-token)=([^\s;,\"'&<>`]{1,4096})"
)


def _cookies(doc: Doc) -> list[Candidate]:
    """Session cookies: in `Cookie:`/`Set-Cookie:` headers, `curl -b`, and bare (`sessionid=…`)."""
    lowered = doc.lowered
    if "cookie" not in lowered and "sid=" not in lowered and "sess" not in lowered:
        return []
    text = doc.text
    out: list[Candidate] = []
    if "cookie" in lowered or " -b " in lowered:
        header, haystack = doc.caseless(
            r"(?:cookie[\"']?[ \t]{0,4}[:=][ \t]{0,4}|(?:^|[ \t])(?:-b|--cookie)[ \t]{1,4})"
            r"[\"'`]?([^\n\"'`]{3,4096})"
        )
        pairs, names = rx(r"(?:^|;)[ \t]{0,8}([^=;\s]{1,128})=([^;\s]{0,4096})"), rx(_SESSION_COOKIE)
        for match in header.finditer(haystack):
            start = match.start(1)
            for pair in pairs.finditer(haystack[start : match.end(1)]):
                value = text[start + pair.start(2) : start + pair.end(2)]
                if names.fullmatch(pair.group(1)) and "srf" not in pair.group(1) and _cookie_ok(value):
                    out.append((match.start(), "session-cookie", value))
    if "sid=" in lowered or _session_assigned(lowered):
        bare, haystack = doc.caseless(_BARE_SESSION)
        for match in bare.finditer(haystack):
            value = text[match.start(2) : match.end(2)]
            if _cookie_ok(value):
                out.append((match.start(), "session-cookie", value))
    return out


def _session_assigned(lowered: str) -> bool:
    """Whether some `…sess…` word is directly followed by `=` (notes say "session" often, assign it rarely)."""
    at = lowered.find("sess")
    while at >= 0:
        name = lowered[at : at + 40].split(None, 1)[0] if not lowered[at].isspace() else ""
        if "=" in name:
            return True
        at = lowered.find("sess", at + 4)
    return False


def _cookie_ok(value: str) -> bool:
    """A cookie value that is a generated session id or token, not a filler or a reference."""
    value = value.strip("\"'")
    if len(value) < 16 or (value[0] in "$<{%" and not value.lower().startswith("s%3a")):
        return False
    pieces = rx(r"%[0-9A-Fa-f]{2}|[.:|_\-]").split(value)
    return shapes.token_like(max(pieces, key=len)) or shapes.token_like(value)


# scheme://<public key>[:<legacy secret key>]@host[:port]/[path/]<project id>
_SENTRY_DSN = (
    r"https?://([0-9a-f]{32})(?::[0-9a-f]{32})?@([A-Za-z0-9.\-]{1,253})(?::[0-9]{1,5})?/"
    r"(?:[A-Za-z0-9_.\-]{1,64}/){0,4}[0-9]{1,20}(?![A-Za-z0-9])"
)


def _sentry_dsns(doc: Doc) -> list[Candidate]:
    """Sentry DSNs, `https://<32 hex>@o1.ingest.sentry.io/2`: the key lets anyone send events into the
    project. On a host not named sentry (self-hosted), only after `dsn` on its line."""
    text = doc.text
    if "@" not in text or "://" not in text or ("sentry" not in doc.lowered and "dsn" not in doc.lowered):
        return []
    out: list[Candidate] = []
    for match in rx(_SENTRY_DSN).finditer(text):
        key, host, start = match.group(1), match.group(2).lower(), match.start()
        if "sentry" not in host:  # self-hosted: `dsn` must come before it on its line
            before = text[max(0, start - 200) : start]
            if "dsn" not in before[before.rfind("\n") + 1 :].lower():
                continue
        if shapes.looks_random(key) and not shapes.is_placeholder(key):
            out.append((start, "sentry-dsn", key))
    return out


def _jwk_private_keys(doc: Doc) -> list[Candidate]:
    """A JSON Web Key with its private exponent `d` (a JWKS of public keys has none)."""
    text = doc.text
    if '"kty"' not in text or '"d"' not in text:
        return []
    pattern = rx(r"\"d\"[ \t]{0,4}:[ \t]{0,4}\"([A-Za-z0-9_\-]{32,})\"")
    return [(m.start(), "jwk-private-key", m.group(1)) for m in pattern.finditer(text)]


def _kubernetes_secrets(doc: Doc) -> list[Candidate]:
    """Values under `data:`/`stringData:` of a Kubernetes Secret (base64 is an encoding, not a lock).

    Works per YAML document (split at `---` and at Markdown fences), since `kubectl get -o yaml`
    prints `data:` before `kind: Secret`.
    """
    text = doc.text
    if "Secret" not in text or "ata" not in text:
        return []
    kind = rx(r"^[ \t]*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?Secret\b")
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
        if not value or shapes.is_placeholder(value) or value[0] in "$<{|>":
            continue
        if (len(value) >= 6 and not shapes.word_like(value)) if string_data else bool(shapes.b64_bytes(value)):
            pending.append((doc.starts[index] + indent, "kubernetes-secret", value))
    out.extend(pending if is_secret else ())
    return out


# What `secrets.scan_text` runs from this module (findings are sorted, so the order does not matter).
FINDERS = (
    private_keys,
    _service_accounts,
    _url_credentials,
    _curl_credentials,
    _auth_headers,
    _jwk_private_keys,
    _docker_auths,
    _kubernetes_secrets,
    _cookies,
    _sentry_dsns,
)
