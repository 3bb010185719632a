"""Token-format rules for the secret gate: literal prefixes first, a regular expression second.

Each rule names the literal substrings that any match must contain. The gate asks `prefix in text`
for every rule (a C-speed substring search) and compiles and runs a rule's expression only when one of
its prefixes occurs, so a clean prose note costs a few dozen substring searches and no regex work.
Every expression starts with its literal prefix (so the regex engine can jump between occurrences) and
uses bounded repetition only, which keeps the worst case linear in the input.

The formats follow the public rule sets of gitleaks and trufflehog. Where a format carries a checksum
(GitHub's and npm's CRC32 in base62) a valid checksum is accepted outright; a body without one must
still look random, which is what turns away fillers such as `ghp_xxxx…` and sequential examples.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import pairwise
from typing import NamedTuple

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WORDISH = _ALNUM | {"_"}

# Substrings that mark a value as a filler, an example or an instruction to the reader, not a secret.
PLACEHOLDER_MARKS = (
    "xxxx",
    "****",
    "....",
    "…",
    "example",
    "your_",
    "your-",
    "yourtoken",
    "yourkey",
    "yourapi",
    "placeholder",
    "redacted",
    "replace_me",
    "replaceme",
    "changeme",
    "change_me",
    "change-me",
    "dummy",
    "insert",
    "goes_here",
    "goes-here",
    "_here",
    "-here",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "%(",
    "fixme",
    "todo",
    "notreal",
    "not_real",
    "not-real",
)


def shannon_entropy(value: str) -> float:
    """Bits per character: random key material scores high, words and fillers low."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def is_placeholder(value: str) -> bool:
    """True for fillers and references people write instead of a secret."""
    lowered = value.lower()
    if any(mark in lowered for mark in PLACEHOLDER_MARKS):
        return True
    return compiled(r"(.)\1{5}", re.DOTALL).search(lowered) is not None


def is_sequential(value: str) -> bool:
    """True for `abcdef…`/`123456…`-style bodies that documentation uses as stand-ins."""
    if len(value) < 8:
        return False
    lowered = value.lower()
    steps = sum(1 for a, b in pairwise(lowered) if ord(b) - ord(a) == 1)
    return steps * 2 >= len(value) - 1


def looks_random(value: str, min_len: int = 16) -> bool:
    """A body that could be generated key material: long enough, varied, not a filler."""
    if len(value) < min_len or is_placeholder(value) or is_sequential(value):
        return False
    floor = min(3.0, math.log2(len(value)) * 0.6)
    return shannon_entropy(value) >= floor


def _base62_decode(text: str) -> int:
    number = 0
    for char in text:
        index = _BASE62.find(char)
        if index < 0:
            return -1
        number = number * 62 + index
    return number


def crc32_base62_ok(body: str) -> bool:
    """GitHub and npm tokens: 30 random base62 characters then their CRC32 in 6 base62 digits."""
    if len(body) != 36:
        return False
    from binascii import crc32

    return _base62_decode(body[30:]) == crc32(body[:30].encode("ascii", "replace"))


def _checksummed(token: str) -> bool:
    body = token[4:]
    return crc32_base62_ok(body) or looks_random(body)


def _random_after(prefix_len: int, min_len: int = 16) -> Callable[[str], bool]:
    def check(token: str) -> bool:
        return looks_random(token[prefix_len:], min_len)

    return check


def _random_tail(token: str) -> bool:
    """Check the part after the last separator, which is where the key material lives."""
    tail = re.split(r"[._-]", token)
    return looks_random(max(tail, key=len), 12)


def _not_example(token: str) -> bool:
    return "EXAMPLE" not in token.upper() and not is_sequential(token[4:]) and not is_placeholder(token)


def _jwt_ok(token: str) -> bool:
    """A JSON Web Token: a base64url JSON header with `alg` and a non-empty signature."""
    import base64

    parts = token.split(".")
    if len(parts) < 3 or len(parts[2]) < 16:
        return False
    head = parts[0] + "=" * (-len(parts[0]) % 4)
    try:
        decoded = base64.urlsafe_b64decode(head.encode("ascii"))
    except ValueError:
        return False
    return decoded.lstrip().startswith(b"{") and b'"alg"' in decoded.replace(b" ", b"")


class TokenRule(NamedTuple):
    """One token format: prefixes that gate it, an expression, an optional validator."""

    detector: str
    prefixes: tuple[str, ...]
    pattern: str
    check: Callable[[str], bool] | None = None


RULES: tuple[TokenRule, ...] = (
    TokenRule(
        "github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{36}", _checksummed
    ),
    TokenRule(
        "github-fine-grained-token",
        ("github_pat_",),
        r"github_pat_[A-Za-z0-9_]{40,255}",
        _random_after(11, 30),
    ),
    TokenRule(
        "gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glft-", "glimt-", "glcbt-", "gloas-", "glagent-"),
        r"gl(?:pat|dt|rt|ptt|soat|ft|imt|cbt|oas|agent)-[A-Za-z0-9_.\-]{20,200}",
        _random_tail,
    ),
    TokenRule("gitlab-runner-token", ("GR1348941",), r"GR1348941[A-Za-z0-9_\-]{20,}", _random_after(9, 16)),
    TokenRule(
        "aws-access-key-id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}",
        _not_example,
    ),
    TokenRule("anthropic-api-key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_\-]{32,300}", _random_after(7, 24)),
    TokenRule(
        "openai-api-key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"),
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{32,300}",
        _random_tail,
    ),
    TokenRule("openai-api-key", ("T3BlbkFJ",), r"sk-[A-Za-z0-9_\-]{10,80}T3BlbkFJ[A-Za-z0-9_\-]{10,80}"),
    TokenRule("sk-api-key", ("sk-",), r"sk-[A-Za-z0-9]{32,128}", _random_after(3, 32)),
    TokenRule("google-api-key", ("AIza",), r"AIza[0-9A-Za-z_\-]{35}", _random_after(4, 30)),
    TokenRule("google-oauth-client-secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_\-]{24,40}", _random_after(7)),
    TokenRule("google-oauth-token", ("ya29.",), r"ya29\.[0-9A-Za-z_\-]{30,}", _random_after(5, 24)),
    TokenRule("huggingface-token", ("hf_",), r"hf_[A-Za-z0-9]{30,40}", _random_after(3, 30)),
    TokenRule("huggingface-token", ("api_org_",), r"api_org_[A-Za-z0-9]{30,40}", _random_after(8, 30)),
    TokenRule("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36}", _checksummed),
    TokenRule("pypi-token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    TokenRule(
        "vault-token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_\-]{24,400}", _random_after(4, 24)
    ),
    TokenRule(
        "digitalocean-token",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        r"do[opr]_v1_[a-f0-9]{64}",
        _random_after(7, 64),
    ),
    TokenRule("databricks-token", ("dapi",), r"dapi[a-f0-9]{32}(?:-\d)?", _random_after(4, 32)),
    TokenRule(
        "doppler-token",
        ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
        r"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,64}",
        _random_tail,
    ),
    TokenRule("grafana-cloud-token", ("glc_",), r"glc_[A-Za-z0-9+/]{32,400}={0,2}", _random_after(4, 32)),
    TokenRule(
        "grafana-service-account-token",
        ("glsa_",),
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        _random_after(5, 32),
    ),
    TokenRule("grafana-api-key", ("eyJrIjoi",), r"eyJrIjoi[A-Za-z0-9+/]{60,400}={0,2}"),
    TokenRule("notion-token", ("ntn_",), r"ntn_[A-Za-z0-9]{40,50}", _random_after(4, 40)),
    TokenRule("notion-token", ("secret_",), r"secret_[A-Za-z0-9]{43}", _random_after(7, 43)),
    TokenRule("pulumi-token", ("pul-",), r"pul-[a-f0-9]{40}", _random_after(4, 40)),
    TokenRule("sentry-token", ("sntrys_eyJ",), r"sntrys_eyJ[A-Za-z0-9+/=_\-]{50,}"),
    TokenRule("sentry-token", ("sntryu_",), r"sntryu_[a-f0-9]{64}", _random_after(7, 64)),
    TokenRule(
        "shopify-token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        _random_after(6, 32),
    ),
    TokenRule("mailgun-key", ("key-",), r"key-[a-f0-9]{32}", _random_after(4, 32)),
    TokenRule("terraform-cloud-token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}"),
    TokenRule(
        "azure-ad-client-secret",
        ("Q~",),
        r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
        _random_after(5, 24),
    ),
    TokenRule("telegram-bot-token", (":AA",), r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}", _random_tail),
    TokenRule("mailchimp-key", ("-us",), r"[0-9a-f]{32}-us[0-9]{1,2}", lambda t: looks_random(t[:32], 32)),
    TokenRule("azure-storage-key", ("AccountKey=",), r"AccountKey=[A-Za-z0-9+/]{80,90}={0,2}"),
    TokenRule(
        "slack-token",
        ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe."),
        r"xox(?:[abposr]|e\.xox[bp]|e)-[A-Za-z0-9\-]{20,250}",
        _random_tail,
    ),
    TokenRule("slack-app-token", ("xapp-",), r"xapp-[A-Za-z0-9\-]{20,250}", _random_tail),
    TokenRule(
        "slack-webhook",
        ("hooks.slack.com/",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,120}",
        _random_tail,
    ),
    TokenRule(
        "discord-webhook",
        ("/api/webhooks/",),
        r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_\-]{30,}",
        _random_tail,
    ),
    TokenRule(
        "stripe-secret-key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,247}",
        _random_after(8, 20),
    ),
    TokenRule("stripe-webhook-secret", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{24,}", _random_after(6, 24)),
    TokenRule(
        "sendgrid-api-key", ("SG.",), r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", _random_tail
    ),
    TokenRule("twilio-api-key", ("SK",), r"SK[0-9a-fA-F]{32}", _random_after(2, 32)),
    TokenRule(
        "square-token", ("sq0atp-", "sq0csp-"), r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}", _random_after(7, 22)
    ),
    TokenRule("square-token", ("EAAA",), r"EAAA[A-Za-z0-9_+\-]{60}", _random_after(4, 60)),
    TokenRule("facebook-access-token", ("EAA",), r"EAA[A-Za-z0-9]{90,400}", _random_after(3, 90)),
    TokenRule("linear-api-key", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}", _random_after(8, 40)),
    TokenRule("postman-api-key", ("PMAK-",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", _random_tail),
    TokenRule("atlassian-api-token", ("ATATT3",), r"ATATT3[A-Za-z0-9_=\-]{150,300}", _random_after(6, 100)),
    TokenRule(
        "newrelic-key",
        ("NRAK-", "NRJS-", "NRII-"),
        r"NR(?:AK|JS|II)-[A-Za-z0-9]{20,40}",
        _random_after(5, 20),
    ),
    TokenRule("dynatrace-token", ("dt0c01.",), r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", _random_tail),
    TokenRule("heroku-api-key", ("HRKU-",), r"HRKU-[A-Za-z0-9_\-]{20,}", _random_after(5, 20)),
    TokenRule("flyio-token", ("fo1_",), r"fo1_[A-Za-z0-9_\-]{39,50}", _random_after(4, 39)),
    TokenRule("flyio-token", ("FlyV1 fm",), r"FlyV1 fm[12][ar]?_[A-Za-z0-9+/=_\-]{60,}"),
    TokenRule(
        "age-secret-key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"
    ),
    TokenRule("onepassword-token", ("ops_eyJ",), r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}"),
    TokenRule(
        "onepassword-secret-key",
        ("A3-",),
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    TokenRule("cloudflare-origin-ca-key", ("v1.0-",), r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    TokenRule("alibaba-access-key", ("LTAI",), r"LTAI[A-Za-z0-9]{12,20}", _random_after(4, 12)),
    TokenRule("brevo-api-key", ("xkeysib-", "xsmtpsib-"), r"x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    TokenRule("figma-token", ("figd_",), r"figd_[A-Za-z0-9_\-]{40}", _random_after(5, 32)),
    TokenRule("airtable-token", ("pat",), r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    TokenRule("supabase-token", ("sbp_",), r"sbp_[a-f0-9]{40}", _random_after(4, 40)),
    TokenRule("supabase-token", ("sb_secret_",), r"sb_secret_[A-Za-z0-9_\-]{20,}", _random_after(10, 20)),
    TokenRule("replicate-token", ("r8_",), r"r8_[A-Za-z0-9]{37}", _random_after(3, 30)),
    TokenRule("groq-api-key", ("gsk_",), r"gsk_[A-Za-z0-9]{48,52}", _random_after(4, 40)),
    TokenRule("xai-api-key", ("xai-",), r"xai-[A-Za-z0-9]{70,90}", _random_after(4, 60)),
    TokenRule("perplexity-api-key", ("pplx-",), r"pplx-[A-Za-z0-9]{40,56}", _random_after(5, 40)),
    TokenRule("langsmith-key", ("lsv2_",), r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    TokenRule("docker-hub-token", ("dckr_pat_",), r"dckr_pat_[A-Za-z0-9_\-]{27,}", _random_after(9, 20)),
    TokenRule("mapbox-secret-token", ("sk.eyJ",), r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    TokenRule("rubygems-key", ("rubygems_",), r"rubygems_[a-f0-9]{48}"),
    TokenRule(
        "tailscale-key",
        ("tskey-",),
        r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
        _random_tail,
    ),
    TokenRule("buildkite-token", ("bkua_",), r"bkua_[a-f0-9]{40}"),
    TokenRule("prefect-key", ("pnu_",), r"pnu_[A-Za-z0-9]{36}", _random_after(4, 30)),
    TokenRule(
        "planetscale-token",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=\-]{32,64}",
        _random_tail,
    ),
    TokenRule("render-api-key", ("rnd_",), r"rnd_[A-Za-z0-9]{32}", _random_after(4, 32)),
    TokenRule("pinecone-key", ("pcsk_",), r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}", _random_tail),
    TokenRule("clojars-token", ("CLOJARS_",), r"CLOJARS_[a-z0-9]{60}"),
    TokenRule("adafruit-key", ("aio_",), r"aio_[A-Za-z0-9]{28}", _random_after(4, 28)),
    TokenRule("shippo-token", ("shippo_live_", "shippo_test_"), r"shippo_(?:live|test)_[a-f0-9]{40}"),
    TokenRule("duffel-token", ("duffel_live_", "duffel_test_"), r"duffel_(?:live|test)_[A-Za-z0-9_=\-]{43}"),
    TokenRule("easypost-key", ("EZAK", "EZTK"), r"EZ[AT]K[A-Za-z0-9]{54}"),
    TokenRule("flutterwave-key", ("FLWSECK",), r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X"),
    TokenRule("typeform-token", ("tfp_",), r"tfp_[A-Za-z0-9_.=\-]{59}"),
    TokenRule("circleci-token", ("CCIPAT_",), r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    TokenRule(
        "jwt",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_\-]{8,2000}\.eyJ[A-Za-z0-9_\-]{8,8000}\.[A-Za-z0-9_\-]{16,2000}",
        _jwt_ok,
    ),
)

# Rules whose match must not sit inside a longer word (`key-…` in `monkey-…`, `SK…` in `DESK…`).
LEFT_BOUNDED = frozenset(
    {
        "mailgun-key",
        "twilio-api-key",
        "sk-api-key",
        "huggingface-token",
        "aws-access-key-id",
        "databricks-token",
        "square-token",
        "facebook-access-token",
        "notion-token",
        "airtable-token",
        "pulumi-token",
        "render-api-key",
        "adafruit-key",
        "alibaba-access-key",
        "prefect-key",
        "replicate-token",
        "onepassword-secret-key",
        "jwt",
        "github-token",
        "npm-token",
        "gitlab-token",
        "vault-token",
        "terraform-cloud-token",
        "azure-ad-client-secret",
        "telegram-bot-token",
        "mailchimp-key",
    }
)

# Fixed-length formats with short prefixes: a longer run of key characters is something else.
RIGHT_BOUNDED = frozenset(
    {
        "mailgun-key",
        "twilio-api-key",
        "aws-access-key-id",
        "databricks-token",
        "pulumi-token",
        "render-api-key",
        "adafruit-key",
        "prefect-key",
        "replicate-token",
        "notion-token",
        "shopify-token",
        "digitalocean-token",
        "sentry-token",
        "linear-api-key",
        "buildkite-token",
        "rubygems-key",
        "supabase-token",
        "google-api-key",
        "telegram-bot-token",
        "mailchimp-key",
    }
)

_compiled: dict[tuple[str, int], re.Pattern[str]] = {}


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile once, on first use: a rule whose prefix never occurs costs no compilation."""
    found = _compiled.get((pattern, flags))
    if found is None:
        found = _compiled[(pattern, flags)] = re.compile(pattern, flags)
    return found


def token_candidates(text: str) -> list[tuple[int, str, str]]:
    """(offset, detector, value) for every token-format match that passes its validator."""
    out: list[tuple[int, str, str]] = []
    size = len(text)
    for rule in RULES:
        if not any(prefix in text for prefix in rule.prefixes):
            continue
        bounded = rule.detector in LEFT_BOUNDED
        fixed = rule.detector in RIGHT_BOUNDED
        for match in compiled(rule.pattern).finditer(text):
            start, end = match.span()
            if bounded and start > 0 and text[start - 1] in _WORDISH:
                continue
            if fixed and end < size and text[end] in _WORDISH:
                continue
            token = match.group(0)
            if rule.check is None or rule.check(token):
                out.append((start, rule.detector, token))
    return out
