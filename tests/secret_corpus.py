"""A corpus of Markdown notes for the secret gate: generated fake credentials and hard negatives.

Nothing here is a real credential, and no complete token is written in this file: every positive is
built at run time from a format's prefix and seeded random material (with a valid checksum where the
format has one), so repository scanners and push protection have nothing to find in the source.

`positives()` yields notes that each hold one secret; `negatives()` yields notes that hold none but
look like they might (digests, ids, public keys, placeholders, prose about secrets). Both are
deterministic: the same seed gives the same notes. The bench script imports this module too.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
DASHES = "-" * 5


@dataclass(frozen=True)
class Sample:
    kind: str  # the secret type (positives) or the negative category
    family: str  # a coarser grouping for the bench's tables
    text: str  # the whole note, frontmatter included
    secret: str  # the secret value planted in the note ("" for negatives)


def j(*parts: str) -> str:
    """Join pieces: keeps whole tokens and PEM headers out of the source text."""
    return "".join(parts)


def uid(r: random.Random) -> uuid.UUID:
    return uuid.UUID(int=r.getrandbits(128))


def rs(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def b62_encode(number: int, width: int = 6) -> str:
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = B62[digit] + out
    return out.rjust(width, "0")


def checksummed(r: random.Random, prefix: str) -> str:
    """GitHub/npm style: 30 random base62 characters, then their CRC32 in 6 base62 digits."""
    body = rs(r, B62, 30)
    return prefix + body + b62_encode(binascii.crc32(body.encode()))


def pem_body(r: random.Random, lines: int, first: str = "MII") -> str:
    raw = first + rs(r, B64, 64 * lines - len(first))
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


def encrypted_key_body(r: random.Random) -> str:
    """An encrypted PKCS#8 key's base64 (PBES2 with PBKDF2 and AES-256-CBC), 64 characters a line:
    the real structure, with random salt, IV and ciphertext."""
    oid = bytes.fromhex
    pbkdf2 = b"\x30\x1b" + oid("06092a864886f70d01050c") + b"\x30\x0e\x04\x08" + r.randbytes(8) + oid("02020800")
    cipher = b"\x30\x1d" + oid("060960864801650304012a") + b"\x04\x10" + r.randbytes(16)
    algorithm = b"\x30\x49" + oid("06092a864886f70d01050d") + b"\x30\x3c" + pbkdf2 + cipher
    body = algorithm + b"\x04\x82\x04\xd0" + r.randbytes(1232)
    raw = base64.b64encode(b"\x30\x82" + len(body).to_bytes(2, "big") + body).decode()
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


def pem(kind: str, body: str) -> str:
    label = f"{kind} PRIVATE KEY".strip()
    return f"{DASHES}BEGIN {label}{DASHES}\n{body}\n{DASHES}END {label}{DASHES}"


PASSPHRASE_WORDS = ["maple", "otter", "cobalt", "quartz", "falcon", "harbor", "lantern", "meadow", "pepper"]
PASSPHRASE_WORDS += ["violet", "canyon", "ember", "walrus", "zephyr"]


def passphrase(r: random.Random, separator: str = "-", count: int = 4) -> str:
    """Diceware style: a few common words, all lower case, joined by one separator."""
    return separator.join(r.sample(PASSPHRASE_WORDS, count))


SEED_WORDS = ["abandon", "ability", "absorb", "acoustic", "actress", "cabbage", "canyon", "dolphin", "eagle"]
SEED_WORDS += ["fabric", "galaxy", "harvest", "island", "jungle", "kitten", "lemon", "meadow", "napkin", "orbit"]


def luhn_completed(partial: str) -> str:
    """`partial` with the Luhn check digit that makes it a well-formed card number."""
    total = 0
    for position, char in enumerate(reversed(partial)):
        value = int(char) * (1 if position % 2 else 2)
        total += value - 9 if value > 9 else value
    return partial + str(-total % 10)


def card(r: random.Random, prefix: str = "4", length: int = 16, group: str = " ") -> str:
    """A random, Luhn-valid card number with an issuer's prefix, grouped like Visa's (or Amex's 4-6-5)."""
    digits = luhn_completed(prefix + "".join(r.choice(string.digits) for _ in range(length - len(prefix) - 1)))
    if not group:
        return digits
    sizes = (4, 6, 5) if length == 15 else (4,) * (length // 4) + ((length % 4,) if length % 4 else ())
    parts, at = [], 0
    for size in sizes:
        parts.append(digits[at : at + size])
        at += size
    return group.join(parts)


def password(r: random.Random) -> str:
    words = ["Maple", "River", "Otter", "Cobalt", "Sunset", "Quartz", "Falcon", "Harbor"]
    return r.choice(words) + str(r.randint(10, 9999)) + r.choice("!#%&*?@") + rs(r, ALNUM, 3)


def frontmatter(r: random.Random, kind: str) -> str:
    day = r.randint(1, 28)
    return f"---\nid: note-{r.randint(1000, 9999)}\ntype: {kind}\ncreated: 2025-03-{day:02d}T10:00:00Z\n---\n"


PROSE = [
    "Worked through the deploy checklist with the team and wrote down what we changed.",
    "The staging cluster was rebuilt on Tuesday; the migration ran without errors.",
    "Next time, run the smoke tests before rotating anything in production.",
    "Pairing notes from the afternoon: the flaky test was a timezone issue.",
]


def note(r: random.Random, title: str, body: str) -> str:
    return f"{frontmatter(r, 'fact')}# {title}\n\n{r.choice(PROSE)}\n\n{body}\n\n{r.choice(PROSE)}\n"


def fenced(lang: str, body: str) -> str:
    return f"```{lang}\n{body}\n```"


# --- positives: (type, family, build(r) -> (secret, snippet)) ---------------------------------------

Builder = Callable[[random.Random], "tuple[str, str]"]


def _env(name: str, value: str) -> str:
    return fenced("bash", f"export {name}={value}")


def _tok(prefix_parts: tuple[str, ...], alphabet: str, n: int, suffix: str = "") -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        return j(*prefix_parts) + rs(r, alphabet, n) + suffix, ""

    return build


def _sa_json(r: random.Random) -> tuple[str, str]:
    key = pem("", pem_body(r, 4, "MIIEv")).replace("\n", "\\n")
    doc = {
        "type": "service_account",
        "project_id": f"demo-{r.randint(100, 999)}",
        "private_key_id": rs(r, HEX, 40),
        "private_key": key,
        "client_email": f"ci@demo-{r.randint(100, 999)}.iam.gserviceaccount.com",
    }
    return key, fenced("json", json.dumps(doc, indent=2).replace("\\\\n", "\\n"))


def _aws_pair(r: random.Random) -> tuple[str, str]:
    key_id = j("AK", "IA") + rs(r, string.ascii_uppercase + "234567", 16)
    secret = rs(r, B64, 40)
    return secret, fenced("ini", f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}")


def _aws_bare_secret(r: random.Random) -> tuple[str, str]:
    key_id = j("AS", "IA") + rs(r, string.ascii_uppercase + "234567", 16)
    secret = rs(r, B64, 40)
    return secret, f"Temporary creds for the AWS sandbox: `{key_id}` and `{secret}` (expire tonight)."


def _k8s(r: random.Random) -> tuple[str, str]:
    value = base64.b64encode(password(r).encode()).decode()
    yaml = (
        "apiVersion: v1\ndata:\n  username: "
        + base64.b64encode(b"app").decode()
        + f"\n  password: {value}\nkind: Secret\nmetadata:\n  name: db-creds\ntype: Opaque"
    )
    return value, fenced("yaml", yaml)


def _k8s_string_data(r: random.Random) -> tuple[str, str]:
    value = password(r)
    yaml = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n  API_TOKEN: {value}"
    return value, fenced("yaml", yaml)


def _pem_kind(kind: str, first: str = "MII") -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        body = pem_body(r, 6, first)
        if kind == "ENCRYPTED-LEGACY":
            block = pem(
                "RSA",
                "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + rs(r, HEX, 32).upper() + "\n\n" + body,
            )
        elif kind == "PGP":
            label = "PGP PRIVATE KEY BLOCK"
            block = f"{DASHES}BEGIN {label}{DASHES}\n\n{body}\n{DASHES}END {label}{DASHES}"
        else:
            block = pem(kind, body)
        return body.split("\n", 1)[0], fenced("", block)

    return build


def _url(scheme: str, user: str, host: str, wrap: str = "{}") -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        secret = rs(r, ALNUM, 18)
        url = f"{scheme}://{user}:{secret}@{host}"
        return secret, wrap.format(url)

    return build


def _assign(template: str, make: Callable[[random.Random], str] | None = None) -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        value = make(r) if make else rs(r, ALNUM, 24)
        return value, template.format(v=value)

    return build


def _sentence(template: str) -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        value = password(r)
        return value, template.format(v=value)

    return build


def _jwt(r: random.Random) -> tuple[str, str]:
    def seg(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    token = seg({"alg": "HS256", "typ": "JWT"}) + "." + seg({"sub": str(r.randint(1, 10**6)), "iat": 1700000000})
    token += "." + rs(r, URLSAFE, 43)
    return token, f"Session cookie from the staging login: `{token}`"


def _basic(r: random.Random) -> tuple[str, str]:
    value = base64.b64encode(f"deploy:{password(r)}".encode()).decode()
    return value, fenced("http", f"GET /api/v2/builds HTTP/1.1\nAuthorization: Basic {value}")


def _discord(r: random.Random) -> tuple[str, str]:
    token = "M" + rs(r, ALNUM, 23) + "." + rs(r, URLSAFE, 6) + "." + rs(r, URLSAFE, 27)
    return token, _env("DISCORD_BOT_TOKEN", token)


def _telegram(r: random.Random) -> tuple[str, str]:
    token = str(r.randint(10**8, 10**9 - 1)) + ":AA" + rs(r, ALNUM, 33)
    return token, f"Bot for alerts: {token}"


def _azure_ad(r: random.Random) -> tuple[str, str]:
    token = rs(r, ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + rs(r, ALNUM + "_.", 34)
    return token, fenced(
        "json", json.dumps({"clientId": str(uuid.UUID(int=r.getrandbits(128))), "clientSecret": token})
    )


def _terraform(r: random.Random) -> tuple[str, str]:
    token = rs(r, ALNUM, 14) + ".atlasv1." + rs(r, ALNUM, 67)
    return token, fenced("hcl", f'credentials "app.terraform.io" {{\n  token = "{token}"\n}}')


def _mailchimp(r: random.Random) -> tuple[str, str]:
    token = rs(r, HEX, 32) + "-us" + str(r.randint(1, 20))
    return token, f"Newsletter export uses {token} for now."


def _artifactory(r: random.Random) -> tuple[str, str]:
    token = "AKC" + rs(r, ALNUM, 70)
    return token, fenced("properties", f"artifactory_api = {token}")


def _ibm(r: random.Random) -> tuple[str, str]:
    token = rs(r, URLSAFE, 44)
    return token, fenced("bash", f"ibm_cloud_api_key='{token}'")


def _opaque_bearer(r: random.Random) -> tuple[str, str]:
    token = rs(r, ALNUM, 40)
    return token, fenced("bash", f"curl -H 'Authorization: Bearer {token}' https://api.internal.example/v1/jobs")


def _curl(r: random.Random) -> tuple[str, str]:
    value = password(r)
    return value, fenced("bash", f"curl -u ci-bot:{value} https://ci.internal.example/api/json")


def _wrap_token(template: str, builder: Builder) -> Builder:
    def build(r: random.Random) -> tuple[str, str]:
        token, _ = builder(r)
        return token, template.format(t=token)

    return build


def _gh(prefix: str) -> Builder:
    return lambda r: (checksummed(r, prefix), "")


POSITIVE_SPECS: list[tuple[str, str, Builder, list[str]]] = [
    # (type, family, build, contexts: templates with {t} where the token goes)
    (
        "github-classic-pat",
        "vcs",
        _gh(j("gh", "p_")),
        ["GITHUB_TOKEN={t}", "git clone https://{t}@github.com/acme/app"],
    ),
    ("github-oauth", "vcs", _gh(j("gh", "o_")), ['{{"access_token": "{t}"}}']),
    ("github-user-to-server", "vcs", _gh(j("gh", "u_")), ["token {t}"]),
    ("github-server-to-server", "vcs", _gh(j("gh", "s_")), ["installation token: {t}"]),
    ("github-refresh", "vcs", _gh(j("gh", "r_")), ["refresh={t}"]),
    (
        "github-fine-grained",
        "vcs",
        lambda r: (j("github", "_pat_") + rs(r, ALNUM, 22) + "_" + rs(r, ALNUM, 59), ""),
        ["gh auth login --with-token <<< {t}"],
    ),
    ("gitlab-pat", "vcs", _tok((j("gl", "pat-"),), URLSAFE, 20), ["GITLAB_TOKEN={t}", "PRIVATE-TOKEN: {t}"]),
    ("aws-key-pair", "cloud", _aws_pair, []),
    ("aws-secret-beside-id", "cloud", _aws_bare_secret, []),
    (
        "anthropic",
        "ai",
        _tok((j("sk", "-ant-", "api03-"),), URLSAFE, 93, "AA"),
        ["ANTHROPIC_API_KEY={t}", "key for claude: {t}"],
    ),
    (
        "openai-project",
        "ai",
        _tok((j("sk", "-proj-"),), URLSAFE, 120),
        ["OPENAI_API_KEY={t}", 'client = OpenAI(api_key="{t}")'],
    ),
    ("openai-service-account", "ai", _tok((j("sk", "-svcacct-"),), URLSAFE, 100), ["{t}"]),
    (
        "openai-legacy",
        "ai",
        lambda r: (j("sk", "-") + rs(r, ALNUM, 20) + j("T3Blbk", "FJ") + rs(r, ALNUM, 20), ""),
        ["openai: {t}"],
    ),
    ("google-api-key", "cloud", _tok((j("AI", "za"),), URLSAFE, 35), ["maps key {t}", "GOOGLE_API_KEY: {t}"]),
    (
        "google-oauth-client-secret",
        "cloud",
        _tok((j("GOC", "SPX-"),), URLSAFE, 28),
        ['"client_secret": "{t}"'],
    ),
    ("gcp-service-account", "cloud", _sa_json, []),
    (
        "huggingface",
        "ai",
        _tok((j("h", "f_"),), string.ascii_letters, 34),
        ["HF_TOKEN={t}", "huggingface-cli login --token {t}"],
    ),
    ("npm-token", "registry", _gh(j("np", "m_")), ["//registry.npmjs.org/:_authToken={t}"]),
    ("pypi-token", "registry", _tok((j("pypi-", "AgEIcHlwaS5vcmc"),), URLSAFE, 70), ["password = {t}"]),
    ("vault-token", "infra", _tok((j("hv", "s."),), URLSAFE, 90), ["VAULT_TOKEN={t}"]),
    ("digitalocean", "cloud", _tok((j("dop", "_v1_"),), HEX, 64), ["doctl auth init -t {t}"]),
    ("databricks", "data", _tok((j("da", "pi"),), HEX, 32), ["DATABRICKS_TOKEN={t}"]),
    ("doppler", "infra", _tok((j("dp", ".st."),), ALNUM, 43), ["DOPPLER_TOKEN={t}"]),
    ("grafana-cloud", "observability", _tok((j("gl", "c_"),), ALNUM, 80), ["grafana: {t}"]),
    (
        "grafana-service-account",
        "observability",
        lambda r: (j("gl", "sa_") + rs(r, ALNUM, 32) + "_" + rs(r, HEX, 8), ""),
        ["GF_TOKEN={t}"],
    ),
    ("notion", "saas", _tok((j("nt", "n_"),), ALNUM, 46), ["NOTION_TOKEN={t}"]),
    ("pulumi", "infra", _tok((j("pu", "l-"),), HEX, 40), ["PULUMI_ACCESS_TOKEN={t}"]),
    ("sentry-user", "observability", _tok((j("sntr", "yu_"),), HEX, 64), ["SENTRY_AUTH_TOKEN={t}"]),
    ("sentry-org", "observability", _tok((j("sntr", "ys_", "eyJ"),), URLSAFE, 90), ["{t}"]),
    ("shopify", "saas", _tok((j("shp", "at_"),), HEX, 32), ["X-Shopify-Access-Token: {t}"]),
    ("mailgun", "saas", _tok((j("ke", "y-"),), HEX, 32), ["mailgun api {t}"]),
    ("terraform-cloud", "infra", _terraform, []),
    ("azure-ad-client-secret", "cloud", _azure_ad, []),
    (
        "azure-storage",
        "cloud",
        lambda r: (rs(r, B64, 86) + "==", ""),
        ["DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={t};EndpointSuffix=core.windows.net"],
    ),
    (
        "twilio-auth-token",
        "saas",
        lambda r: (rs(r, HEX, 32), ""),
        ["TWILIO_AUTH_TOKEN={t}", "twilio:\n  auth_token: {t}"],
    ),
    ("twilio-api-key", "saas", _tok((j("S", "K"),), HEX, 32), ["twilio key sid {t}"]),
    (
        "slack-bot",
        "chat",
        lambda r: (
            j("xo", "xb-") + f"{r.randint(10**10, 10**11)}-{r.randint(10**10, 10**11)}-" + rs(r, ALNUM, 24),
            "",
        ),
        ["SLACK_BOT_TOKEN={t}"],
    ),
    (
        "slack-webhook",
        "chat",
        lambda r: (
            "https://"
            + j("hooks.", "slack.com/services/")
            + "T"
            + rs(r, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 10)
            + "/B"
            + rs(r, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 10)
            + "/"
            + rs(r, ALNUM, 24),
            "",
        ),
        ["webhook: {t}"],
    ),
    (
        "stripe-secret",
        "payments",
        _tok((j("sk", "_live_"),), ALNUM, 99),
        ["STRIPE_SECRET_KEY={t}", 'stripe.api_key = "{t}"'],
    ),
    ("stripe-restricted", "payments", _tok((j("rk", "_live_"),), ALNUM, 99), ["{t}"]),
    ("stripe-webhook", "payments", _tok((j("wh", "sec_"),), ALNUM, 32), ["endpoint secret {t}"]),
    (
        "sendgrid",
        "saas",
        lambda r: (j("S", "G.") + rs(r, URLSAFE, 22) + "." + rs(r, URLSAFE, 43), ""),
        ['sg = SendGridAPIClient("{t}")'],
    ),
    (
        "url-credentials",
        "url",
        lambda r: (rs(r, ALNUM, 18), ""),
        [
            'client = MongoClient("mongodb+srv://app:{t}@cluster0.abcde.mongodb.net/prod")',
            "DATABASE_URL=postgres://billing:{t}@db.internal:5432/billing",
            "broker: amqp://worker:{t}@rabbit.internal:5672//",
        ],
    ),
    (
        "url-credentials-no-user",
        "url",
        lambda r: (rs(r, ALNUM, 20), ""),
        ["REDIS_URL=redis://:{t}@cache.internal:6379/0"],
    ),
    ("curl-basic", "url", _curl, []),
    ("private-key-rsa", "key-block", _pem_kind("RSA"), []),
    ("private-key-ec", "key-block", _pem_kind("EC", "MHc"), []),
    ("private-key-dsa", "key-block", _pem_kind("DSA", "MIIBu"), []),
    ("private-key-openssh", "key-block", _pem_kind("OPENSSH", "b3BlbnNzaC1rZXktdjEAAAAA"), []),
    ("private-key-pkcs8", "key-block", _pem_kind("", "MIIEv"), []),
    ("private-key-encrypted-pkcs8", "key-block", _pem_kind("ENCRYPTED", "MIIFH"), []),
    ("private-key-rsa-legacy-encrypted", "key-block", _pem_kind("ENCRYPTED-LEGACY"), []),
    ("private-key-pgp", "key-block", _pem_kind("PGP", "lQOYBG"), []),
    ("kubernetes-secret-data", "kubernetes", _k8s, []),
    ("kubernetes-secret-stringdata", "kubernetes", _k8s_string_data, []),
    ("password-sentence", "prose", _sentence("For the record, the password is {v} until Friday."), []),
    ("password-sentence-for", "prose", _sentence("The wifi password for the lab is `{v}`."), []),
    (
        "password-sentence-was",
        "prose",
        _sentence("Admin login: alice, and my password was {v} before the reset."),
        [],
    ),
    ("jwt", "token", _jwt, []),
    ("bearer-opaque", "header", _opaque_bearer, []),
    ("basic-auth-header", "header", _basic, []),
    ("discord-bot", "chat", _discord, []),
    ("telegram-bot", "chat", _telegram, []),
    ("mailchimp", "saas", _mailchimp, []),
    ("artifactory", "registry", _artifactory, []),
    ("ibm-cloud-iam", "cloud", _ibm, []),
    ("square", "payments", _tok((j("sq0", "csp-"),), URLSAFE, 43), ["SQUARE_SECRET={t}"]),
    ("linear", "saas", _tok((j("lin", "_api_"),), ALNUM, 40), ["LINEAR_API_KEY={t}"]),
    (
        "postman",
        "saas",
        lambda r: (j("PM", "AK-") + rs(r, HEX, 24) + "-" + rs(r, HEX, 34), ""),
        ["postman {t}"],
    ),
    ("atlassian", "saas", _tok((j("ATA", "TT3"),), URLSAFE, 186), ["JIRA_API_TOKEN={t}"]),
    (
        "newrelic",
        "observability",
        _tok((j("NR", "AK-"),), string.ascii_uppercase + string.digits, 27),
        ["NEW_RELIC_API_KEY={t}"],
    ),
    (
        "age",
        "crypto",
        lambda r: (j("AGE-SECRET", "-KEY-1") + rs(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), ""),
        ["# created: 2025-01-01\n{t}"],
    ),
    ("figma", "saas", _tok((j("fi", "gd_"),), URLSAFE, 40), ["FIGMA_TOKEN={t}"]),
    ("replicate", "ai", _tok((j("r", "8_"),), ALNUM, 37), ["REPLICATE_API_TOKEN={t}"]),
    ("groq", "ai", _tok((j("gs", "k_"),), ALNUM, 52), ["GROQ_API_KEY={t}"]),
    ("perplexity", "ai", _tok((j("pp", "lx-"),), ALNUM, 48), ["{t}"]),
    ("docker-hub", "registry", _tok((j("dckr", "_pat_"),), URLSAFE, 27), ["docker login -u acme -p {t}"]),
    (
        "tailscale",
        "infra",
        lambda r: (j("tskey", "-auth-") + rs(r, ALNUM, 12) + "-" + rs(r, ALNUM, 32), ""),
        ["TS_AUTHKEY={t}"],
    ),
    ("supabase", "data", _tok((j("sb", "p_"),), HEX, 40), ["SUPABASE_ACCESS_TOKEN={t}"]),
    ("xai", "ai", _tok((j("xa", "i-"),), ALNUM, 80), ["XAI_API_KEY={t}"]),
    (
        "dynatrace",
        "observability",
        lambda r: (
            j("dt0", "c01.")
            + rs(r, string.ascii_uppercase + string.digits, 24)
            + "."
            + rs(r, string.ascii_uppercase + string.digits, 64),
            "",
        ),
        ["{t}"],
    ),
    (
        "langsmith",
        "ai",
        lambda r: (j("lsv", "2_pt_") + rs(r, HEX, 32) + "_" + rs(r, HEX, 10), ""),
        ["LANGSMITH_API_KEY={t}"],
    ),
    ("planetscale", "data", _tok((j("pscale", "_tkn_"),), URLSAFE, 43), ["PLANETSCALE_TOKEN={t}"]),
]

ASSIGNMENT_SPECS: list[tuple[str, str]] = [
    ("env-assignment", "DB_PASSWORD={v}"),
    ("yaml-assignment", "database:\n  host: db.internal\n  password: {v}"),
    ("json-assignment", '{{"user": "svc", "password": "{v}"}}'),
    ("toml-assignment", '[smtp]\nuser = "mailer"\npassword = "{v}"'),
    ("python-assignment", 'API_SECRET = "{v}"\nclient = Client(secret=API_SECRET)'),
    ("js-assignment", "const apiKey = '{v}';"),
    ("dotnet-connection-string", "Server=sql01;Database=app;User Id=svc;Password={v};"),
    ("cli-flag", "mysql --host db --user root --password={v}"),
]


def positives(seed: int = 3) -> list[Sample]:
    out: list[Sample] = []
    for index, (kind, family, build, contexts) in enumerate(POSITIVE_SPECS):
        for variant, context in enumerate(contexts or [""]):
            r = random.Random(f"{seed}:{index}:{variant}")
            secret, snippet = build(r)
            body = context.format(t=secret) if context else snippet
            if context and "\n" not in body and not body.startswith("{"):
                body = fenced("", body) if variant % 2 == 0 else f"Saved for later: {body}"
            out.append(Sample(kind, family, note(r, f"Notes on {kind}", body), secret))
    for index, (kind, template) in enumerate(ASSIGNMENT_SPECS):
        for variant, maker in enumerate((password, lambda r: rs(r, ALNUM, 32))):
            r = random.Random(f"{seed}:assign:{index}:{variant}")
            value = maker(r)
            out.append(Sample(kind, "assignment", note(r, "Config", fenced("", template.format(v=value))), value))
    return out + variant_positives(seed)


# --- hard negatives -------------------------------------------------------------------------------


def _neg(r: random.Random, category: str, body: str) -> Sample:
    return Sample(category, category, note(r, category.replace("-", " ").title(), body), "")


def negatives(seed: int = 3) -> list[Sample]:
    out: list[Sample] = []
    for i in range(3):
        r = random.Random(f"{seed}:neg:{i}")
        sha = rs(r, HEX, 40)
        out += [
            _neg(r, "git-sha", f"Fixed in commit {sha} (short `{sha[:7]}`), reverted by {rs(r, HEX, 12)}."),
            _neg(
                r,
                "git-sha",
                fenced("json", json.dumps({"commit": sha, "parent": rs(r, HEX, 40), "tree": rs(r, HEX, 40)})),
            ),
            _neg(r, "git-sha", f'rev = "{sha}"\nsecret_rotation_commit = "{rs(r, HEX, 40)}"'),
            _neg(r, "digest", f"image: ghcr.io/acme/api@sha256:{rs(r, HEX, 64)}"),
            _neg(r, "digest", f"{rs(r, HEX, 64)}  dist/app.tar.gz\nsha512: {rs(r, HEX, 128)}"),
            _neg(
                r,
                "digest",
                fenced(
                    "json",
                    json.dumps(
                        {
                            "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
                            "integrity": "sha512-" + base64.b64encode(r.randbytes(64)).decode(),
                        }
                    ),
                ),
            ),
            _neg(
                r,
                "digest",
                f'checksum = "{rs(r, HEX, 64)}"\nsource = "registry+https://github.com/rust-lang/crates.io-index"',
            ),
            _neg(
                r,
                "uuid",
                f"Request id {uid(r)} failed; trace {uid(r)}.",
            ),
            _neg(
                r,
                "uuid",
                f'tenant_id: "{uid(r)}"\nclient_id: "{uid(r)}"',
            ),
            _neg(r, "ulid", f"Event 01H{rs(r, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 23)} was replayed twice."),
            _neg(
                r,
                "ssh-public-key",
                "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, B64, 43) + " alice@laptop",
            ),
            _neg(
                r,
                "ssh-public-key",
                "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ"
                + rs(r, B64, 500)
                + " deploy@ci\n"
                + "Fingerprint: SHA256:"
                + rs(r, B64, 43),
            ),
            _neg(
                r,
                "pgp-public-key",
                fenced(
                    "",
                    f"{DASHES}BEGIN PGP PUBLIC KEY BLOCK{DASHES}\n\nmQINBG"
                    + pem_body(r, 5, "x")[1:]
                    + f"\n{DASHES}END PGP PUBLIC KEY BLOCK{DASHES}",
                ),
            ),
            _neg(
                r,
                "x509-certificate",
                fenced(
                    "",
                    f"{DASHES}BEGIN CERTIFICATE{DASHES}\n" + pem_body(r, 8) + f"\n{DASHES}END CERTIFICATE{DASHES}",
                ),
            ),
            _neg(
                r,
                "public-key-pem",
                fenced(
                    "",
                    f"{DASHES}BEGIN PUBLIC KEY{DASHES}\n" + pem_body(r, 4) + f"\n{DASHES}END PUBLIC KEY{DASHES}",
                ),
            ),
            _neg(
                r,
                "jwks-public-key",
                fenced(
                    "json",
                    json.dumps(
                        {
                            "keys": [
                                {
                                    "kty": "RSA",
                                    "use": "sig",
                                    "alg": "RS256",
                                    "kid": rs(r, URLSAFE, 22),
                                    "n": rs(r, URLSAFE, 342),
                                    "e": "AQAB",
                                }
                            ]
                        },
                        indent=2,
                    ),
                ),
            ),
            _neg(
                r,
                "mermaid",
                fenced(
                    "mermaid",
                    "graph TD\n  A[Client] -->|token| B(API Gateway)\n  B --> C{Valid secret?}\n"
                    "  C -->|yes| D[Service]\n  C -->|no| E[401]",
                ),
            ),
            _neg(
                r,
                "cjk-prose",
                "今日はデプロイの手順を確認しました。パスワードは共有しないこと。秘密鍵は金庫に保管する。"
                "\n数据库密码存放在密钥管理服务中，不要写进笔记。토큰은 환경 변수로 전달합니다.",
            ),
            _neg(
                r,
                "stripe-object-id",
                f"Refund for cus_{rs(r, ALNUM, 14)} on pi_{rs(r, ALNUM, 24)} (charge ch_{rs(r, ALNUM, 24)}).",
            ),
        ]
    r = random.Random(f"{seed}:neg:fixed")
    example_id = j("AKIA", "IOSFODNN7", "EXAMPLE")
    example_secret = j("wJalrXUtnFEMI", "/K7MDENG/bPxRfiCY", "EXAMPLEKEY")
    fixed = [
        (
            "example-key",
            fenced("ini", f"aws_access_key_id = {example_id}\naws_secret_access_key = {example_secret}"),
        ),
        ("example-key", f"The docs use `{example_id}` as the access key id in every snippet."),
        ("placeholder", fenced("yaml", "database:\n  password: ${DB_PASSWORD}\n  user: ${DB_USER}")),
        (
            "placeholder",
            fenced("yaml", "- uses: actions/checkout@v4\n  with:\n    token: ${{ secrets.GITHUB_TOKEN }}"),
        ),
        (
            "placeholder",
            fenced("bash", "export OPENAI_API_KEY=<YOUR_API_KEY>\nexport ANTHROPIC_API_KEY=sk-ant-..."),
        ),
        ("placeholder", f"GITHUB_TOKEN={j('gh', 'p_')}{'x' * 36}\nNPM_TOKEN={j('np', 'm_')}{'X' * 36}"),
        (
            "placeholder",
            'Set `api_key: "sk-..."` in the config and `password: "********"` in the vault file.',
        ),
        (
            "placeholder",
            fenced(
                "python",
                "password = os.environ[\"DB_PASSWORD\"]\ntoken = settings.API_TOKEN\nsecret = get_secret('prod/db')",
            ),
        ),
        ("placeholder", fenced("json", '{"password": "", "token": null, "apiKey": "YOUR_API_KEY_HERE"}')),
        (
            "placeholder",
            "DATABASE_URL=postgres://user:password@localhost:5432/app\nREDIS_URL=redis://localhost:6379/0",
        ),
        (
            "placeholder",
            fenced("bash", 'curl -u "$USER:$TOKEN" https://api.example.com\ncurl -u admin https://x'),
        ),
        (
            "placeholder",
            f"Slack token looks like {j('xo', 'xb-')}your-token-here; Stripe keys look like {j('sk', '_live_')}...",
        ),
        (
            "placeholder",
            fenced("dotenv", "SECRET_KEY=changeme\nAPI_TOKEN=\nPASSWORD=<password>\nJWT_SECRET={{ jwt_secret }}"),
        ),
        (
            "prose-about-secrets",
            "We rotate the database password every 90 days. The password is stored in the vault, "
            "never in notes. Ask Sam for the API key if you need one.",
        ),
        (
            "prose-about-secrets",
            "Private keys (`-----BEGIN RSA PRIVATE KEY-----` blocks) must never be committed; "
            "use the secret manager. Tokens expire after an hour.",
        ),
        (
            "prose-about-secrets",
            "Lesson: the token was leaked in a CI log, so we revoked it and added masking. "
            "The password for staging is rotated weekly by the pipeline.",
        ),
        (
            "prose-about-secrets",
            "Password: see 1Password entry 'prod-db'.\nAPI key: ask in #platform.\nSecret: not needed for local dev.",
        ),
        (
            "prose-about-secrets",
            "Key takeaways: the primary key is (tenant_id, id); the sort key is created_at. "
            "Public key auth only on bastion hosts.",
        ),
        (
            "code-without-secrets",
            fenced(
                "python",
                "def check_password(password: str) -> bool:\n"
                "    token: Optional[str] = None\n    if password == expected:\n"
                "        return True\n    return hmac.compare_digest(token, secret_key)",
            ),
        ),
        (
            "code-without-secrets",
            fenced(
                "typescript",
                "interface Config { apiKey: string; secretName: string }\n"
                "const passwordField = form.querySelector('#password');",
            ),
        ),
        (
            "config-without-secrets",
            fenced(
                "yaml",
                "auth:\n  password_min_length: 12\n  token_ttl: 3600\n"
                "  secret_name: db-credentials\n  password_file: /run/secrets/db",
            ),
        ),
        (
            "config-without-secrets",
            fenced(
                "yaml",
                "apiVersion: v1\nkind: ConfigMap\ndata:\n  LOG_LEVEL: info\n  FEATURE_FLAGS: YWxwaGEsYmV0YQ==",
            ),
        ),
        (
            "config-without-secrets",
            fenced(
                "yaml",
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata: {}\n# populated by external-secrets",
            ),
        ),
        (
            "url-without-credentials",
            "See https://docs.example.com/auth?token=refresh#section and "
            "git@github.com:acme/app.git, ssh://git@github.com/acme/app.git",
        ),
        (
            "url-without-credentials",
            "Mirror: https://mirror.example.org:8443/pkg/ and mailto:ops@example.com",
        ),
        (
            "lockfile",
            fenced(
                "",
                f'left-pad@1.3.0:\n  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#'
                f'{rs(r, HEX, 40)}"\n  integrity sha512-' + base64.b64encode(r.randbytes(64)).decode(),
            ),
        ),
        (
            "lockfile",
            fenced("", f'[[package]]\nname = "serde"\nversion = "1.0.197"\nchecksum = "{rs(r, HEX, 64)}"'),
        ),
        (
            "ids",
            f"Build {r.randint(10**6, 10**7)} on runner i-{rs(r, HEX, 17)} in vpc-{rs(r, HEX, 17)}; "
            f"Sentry issue {rs(r, HEX, 32)}.",
        ),
        ("ids", f"Docker image id sha256:{rs(r, HEX, 64)} and container {rs(r, HEX, 12)}."),
        (
            "base64-data",
            f"Embedded icon: data:image/png;base64,{base64.b64encode(r.randbytes(120)).decode()}",
        ),
        (
            "mermaid",
            fenced(
                "mermaid",
                "sequenceDiagram\n  participant U as User\n  U->>Auth: POST /login (password)\n"
                "  Auth-->>U: 200 {access_token, refresh_token}\n  U->>API: Bearer <access_token>",
            ),
        ),
        ("cjk-prose", "このノートにはトークンは含まれていません。鍵の更新は毎月行います。"),
        (
            "shell-history",
            fenced("bash", "git push -u origin main\ndocker run -u 1000:1000 app\nssh -i ~/.ssh/id_ed25519 host"),
        ),
        (
            "prose-about-secrets",
            "The password is required. The token is refreshed automatically. Our secret is great documentation.",
        ),
        (
            "prose-about-secrets",
            "If the key is missing, run `lifecycle doctor`; the password is never logged.",
        ),
    ]
    out += [_neg(r, category, body) for category, body in fixed]
    return out + variant_negatives(seed)


# --- phrasing variants: the same secrets as people actually paste them ------------------------------

UPPER_B32 = string.ascii_uppercase + "234567"
VariantBuilder = Callable[[random.Random], "tuple[str, str]"]


def _v(secret: Callable[[random.Random], str], template: str) -> VariantBuilder:
    """A variant: make the secret, then place it with `template` ({s} is the secret)."""

    def build(r: random.Random) -> tuple[str, str]:
        value = secret(r)
        return value, template.replace("{s}", value)

    return build


def _gen(prefix: str, alphabet: str, n: int, suffix: str = "") -> Callable[[random.Random], str]:
    return lambda r: prefix + rs(r, alphabet, n) + suffix


def _grafana_cloud(r: random.Random) -> str:
    payload = json.dumps({"o": str(r.randint(10**5, 10**6)), "n": "stack-token", "k": rs(r, ALNUM, 24)})
    return j("gl", "c_") + base64.b64encode(payload.encode()).decode()


def _pem_in(kind: str, indent: str = "") -> Callable[[random.Random], str]:
    return lambda r: pem(kind, pem_body(r, 3)).replace("\n", "\n" + indent)


VARIANT_SPECS: list[tuple[str, str, VariantBuilder]] = [
    (
        "github-in-table",
        "vcs",
        _v(lambda r: checksummed(r, j("gh", "p_")), "| service | token |\n|---|---|\n| gh | {s} |"),
    ),
    (
        "github-in-remote-url",
        "vcs",
        _v(
            lambda r: checksummed(r, j("gh", "p_")),
            "git remote set-url origin https://x-access-token:{s}@github.com/a/b",
        ),
    ),
    ("github-without-checksum", "vcs", _v(_gen(j("gh", "p_"), ALNUM, 36), "bot token {s}")),
    ("npm-without-checksum", "registry", _v(_gen(j("np", "m_"), ALNUM, 36), "NPM_TOKEN={s}")),
    ("anthropic-admin", "ai", _v(_gen(j("sk", "-ant-admin01-"), URLSAFE, 95), "admin key: {s}")),
    ("openai-plain-sk", "ai", _v(_gen(j("sk", "-"), ALNUM, 48), "OPENAI_KEY={s}")),
    ("google-in-url", "cloud", _v(_gen(j("AI", "za"), URLSAFE, 35), "maps.googleapis.com/maps/api/js?key={s}&v=3")),
    ("vault-in-prose", "infra", _v(_gen(j("hv", "s."), ALNUM, 24), "vault token: {s} (root, dev server)")),
    ("databricks-suffixed", "data", _v(_gen(j("da", "pi"), HEX, 32, "-2"), "host=adb-1.azuredatabricks.net token={s}")),
    ("doppler-personal", "infra", _v(_gen(j("dp", ".pt."), ALNUM, 43), "doppler login token {s}")),
    ("grafana-cloud-json", "observability", _v(_grafana_cloud, "GRAFANA_CLOUD_TOKEN={s}")),
    ("notion-legacy", "saas", _v(_gen(j("sec", "ret_"), ALNUM, 43), "NOTION_API_KEY={s}")),
    ("shopify-shared-secret", "saas", _v(_gen(j("shp", "ss_"), HEX, 32), "shopify app secret {s}")),
    (
        "mailgun-signing-key",
        "saas",
        _v(lambda r: rs(r, HEX, 32) + "-" + rs(r, HEX, 8) + "-" + rs(r, HEX, 8), "Mailgun webhook signing key {s}"),
    ),
    ("terraform-env", "infra", _v(lambda r: rs(r, ALNUM, 14) + ".atlasv1." + rs(r, ALNUM, 67), "TFE_TOKEN={s}")),
    (
        "azure-ad-env",
        "cloud",
        _v(lambda r: rs(r, ALNUM, 3) + "8Q~" + rs(r, ALNUM + "_.-~", 34), "AZURE_CLIENT_SECRET={s}"),
    ),
    (
        "twilio-positional",
        "saas",
        _v(lambda r: rs(r, HEX, 32), 'client = twilio.rest.Client("AC' + "0" * 2 + 'ffee11", "{s}")'),
    ),
    (
        "bearer-with-dots",
        "header",
        _v(lambda r: rs(r, ALNUM, 20) + "." + rs(r, ALNUM, 20), "Authorization: Bearer {s}"),
    ),
    (
        "aws-yaml-pair",
        "cloud",
        _v(
            lambda r: rs(r, B64, 40),
            "aws:\n  access_key_id: " + j("AK", "IA") + "Q7RZ2MX4KD5LW3PN\n  secret_access_key: {s}",
        ),
    ),
    ("aws-env-secret", "cloud", _v(lambda r: rs(r, B64, 40), "AWS_SECRET_ACCESS_KEY={s}")),
    (
        "mongo-client",
        "url",
        _v(_gen("", ALNUM, 16), 'MongoClient("mongodb+srv://admin:{s}@cluster0.x1y2z.mongodb.net/?retryWrites=true")'),
    ),
    ("jdbc-query-password", "url", _v(password, "jdbc:mysql://db:3306/app?user=app&password={s}")),
    ("private-key-in-yaml-block", "key-block", _v(_pem_in("EC", "    "), "tls:\n  key: |\n    {s}")),
    ("private-key-in-blockquote", "key-block", _v(_pem_in("RSA", "> "), "> {s}")),
    (
        "putty-private-key",
        "key-block",
        _v(
            lambda r: rs(r, B64, 44),
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\n"
            + "AAAAC3NzaC1lZDI1NTE5AAAAIB"
            + "q" * 3
            + "0Zr7\nPrivate-Lines: 1\n{s}\nPrivate-MAC: 0a1b",
        ),
    ),
    ("curl-user-long-flag", "url", _v(password, "curl --user deploy:{s} https://api.internal.example")),
    ("curl-quoted", "url", _v(password, 'curl -u "ci:{s}" -X POST https://ci.internal.example')),
    ("ini-password", "assignment", _v(password, "[database]\nhost = db1\npassword={s}")),
    ("compose-environment", "assignment", _v(password, "environment:\n  - POSTGRES_PASSWORD={s}")),
    ("helm-values", "assignment", _v(password, "postgresql:\n  auth:\n    postgresPassword: {s}")),
    ("typed-assignment", "assignment", _v(_gen("", ALNUM, 32), 'val apiToken: String = "{s}"')),
    ("http-header-key", "header", _v(_gen("", ALNUM, 32), 'curl -H "X-API-Key: {s}" https://api.internal.example')),
    (
        "django-secret-key",
        "assignment",
        _v(_gen("django-insecure-", string.ascii_lowercase + string.digits + "!@#%^&*-_=+", 50), "SECRET_KEY = '{s}'"),
    ),
    (
        "kubernetes-json",
        "kubernetes",
        _v(
            lambda r: base64.b64encode(password(r).encode()).decode(),
            '{\n  "kind": "Secret",\n  "apiVersion": "v1",\n  "data": {\n    "password": "{s}"\n  }\n}',
        ),
    ),
    ("password-reverse", "prose", _v(password, "`{s}` is the password for the lab router.")),
    ("password-use-as", "prose", _v(password, "Use {s} as the admin password until SSO is back.")),
    ("password-with", "prose", _v(password, "Log in to the staging box with password {s} and reset it.")),
    ("password-changed-to", "prose", _v(password, "I changed the root password to {s} yesterday.")),
    ("password-quoted-word", "prose", _v(_gen("", string.ascii_lowercase, 10), "The password is '{s}'.")),
    ("password-german", "prose", _v(password, "Das WLAN-Passwort ist {s}.")),
    ("password-chinese", "prose", _v(password, "数据库密码是{s}，请勿外传。")),
    ("credential-pair", "prose", _v(password, "Login: admin / {s}")),
    ("passphrase-assignment", "assignment", _v(passphrase, "wifi:\n  ssid: lab\n  password: {s}")),
    ("passphrase-run-together", "prose", _v(lambda r: passphrase(r, ""), "The wifi password is {s}")),
    ("label-without-operator", "prose", _v(lambda r: rs(r, HEX, 64), "api secret {s}")),
    ("label-above-value", "prose", _v(password, "Router admin\n\nPassword:\n{s}")),
    (
        "password-table",
        "table",
        _v(password, "| service | user | password |\n|---|---|---|\n| cache | app | *** |\n| db | app | {s} |"),
    ),
    ("password-csv", "table", _v(password, "name,url,username,password\nGitHub,https://github.com,alice,{s}")),
    ("token-table-plain", "table", _v(_gen("", ALNUM, 32), "service   token\nci        {s}")),
    ("session-cookie-header", "header", _v(_gen("", HEX, 32), "Cookie: sessionid={s}; csrftoken=abc; theme=dark")),
    ("session-cookie-bare", "header", _v(_gen("", ALNUM, 40), "PHPSESSID={s}")),
    ("private-key-body-wrapped", "key-block", _v(lambda r: pem_body(r, 1, "MIIEpAIBAAKCAQEA"), "{s}\n" + "Zm9v" * 16)),
    ("private-key-body-one-line", "key-block", _v(lambda r: "MC4CAQAwBQYDK2VwBCIEI" + rs(r, B64, 43), "ED_KEY={s}")),
    ("openssh-key-body", "key-block", _v(lambda r: "b3BlbnNzaC1rZXktdjEAAAAA" + rs(r, B64, 120), "key body:\n{s}")),
    (
        "recovery-codes",
        "crypto",
        _v(lambda r: "\n".join(f"{rs(r, HEX, 5)}-{rs(r, HEX, 5)}" for _ in range(6)), "GitHub recovery codes:\n\n{s}"),
    ),
    (
        "seed-phrase",
        "crypto",
        _v(lambda r: " ".join(r.choice(SEED_WORDS) for _ in range(12)), "Seed phrase (paper copy in a safe):\n{s}"),
    ),
    ("payment-card-grouped", "payments", _v(card, "Company card for the cloud bill: {s}, exp 09/27")),
    ("payment-card-amex", "payments", _v(lambda r: card(r, "37", 15, "-"), "Amex {s}")),
    ("payment-card-run-together", "payments", _v(lambda r: card(r, "5412", 16, ""), "card_number: {s}")),
    ("sentry-dsn", "observability", _v(_gen("", HEX, 32), "SENTRY_DSN=https://{s}@o450000.ingest.sentry.io/5800000")),
    ("sentry-dsn-self-hosted", "observability", _v(_gen("", HEX, 32), "dsn: https://{s}@errors.example.com/3")),
    (
        "gcp-private-key-id",
        "cloud",
        _v(_gen("", HEX, 40), '{"type": "service_account", "project_id": "demo", "private_key_id": "{s}"}'),
    ),
    ("netrc", "assignment", _v(_gen("", ALNUM, 24), "machine api.heroku.com\n  login me@example.com\n  password {s}")),
    ("sshpass", "url", _v(password, "sshpass -p '{s}' ssh deploy@bastion")),
    ("opaque-token-sentence", "prose", _v(_gen("", ALNUM, 32), "The deploy token is {s}, expires Friday.")),
    ("opaque-client-secret", "assignment", _v(_gen("", ALNUM, 40), "client_secret: {s}")),
    (
        "jwk-private-key",
        "key-block",
        _v(
            _gen("", URLSAFE, 43),
            '{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", '
            '"y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", "d": "{s}"}',
        ),
    ),
    (
        "telegram-in-url",
        "chat",
        _v(
            lambda r: str(r.randint(10**9, 10**10 - 1)) + ":AA" + rs(r, ALNUM, 33),
            "https://api.telegram.org/bot{s}/getMe",
        ),
    ),
    (
        "slack-user-token",
        "chat",
        _v(
            lambda r: (
                j("xo", "xp-")
                + f"{r.randint(10**10, 10**11)}-{r.randint(10**10, 10**11)}-{r.randint(10**12, 10**13)}-"
                + rs(r, HEX, 32)
            ),
            "SLACK_USER_TOKEN={s}",
        ),
    ),
    (
        "docker-config-auth",
        "registry",
        _v(
            lambda r: base64.b64encode(f"bot:{password(r)}".encode()).decode(),
            '{"auths": {"ghcr.io": {"auth": "{s}"}}}',
        ),
    ),
    (
        "azure-sas-url",
        "cloud",
        _v(
            lambda r: rs(r, ALNUM, 20) + "%2B" + rs(r, ALNUM, 20) + "%3D",
            "https://acct.blob.core.windows.net/c/f.csv?sv=2022-11-02&ss=b&srt=o&sp=r&sig={s}",
        ),
    ),
    ("google-refresh-token", "cloud", _v(_gen("1//0", URLSAFE, 60), "refresh_token: {s}")),
    (
        "supabase-service-role-jwt",
        "token",
        _v(
            lambda r: (
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                + base64.urlsafe_b64encode(b'{"role":"service_role","iss":"supabase"}').decode().rstrip("=")
                + "."
                + rs(r, URLSAFE, 43)
            ),
            "SUPABASE_SERVICE_ROLE_KEY={s}",
        ),
    ),
]


def variant_positives(seed: int = 3) -> list[Sample]:
    out = []
    for index, (kind, family, build) in enumerate(VARIANT_SPECS):
        r = random.Random(f"{seed}:variant:{index}")
        secret, snippet = build(r)
        out.append(Sample(kind, family, note(r, "Scratch", snippet), secret))
    return out


def variant_negatives(seed: int = 3) -> list[Sample]:
    r = random.Random(f"{seed}:variant-negatives")
    sha = rs(r, HEX, 40)
    b64 = lambda n: base64.b64encode(r.randbytes(n)).decode()  # noqa: E731
    items = [
        ("git-sha", f'"sha": "{sha}"\n\'{rs(r, HEX, 40)}\'\n`{sha[:10]}`\nMerge: {rs(r, HEX, 7)} {rs(r, HEX, 7)}'),
        ("git-sha", f"{sha[:7]} Fix login token refresh\n{rs(r, HEX, 7)} Rotate secrets doc\ncommit: {sha}"),
        ("digest", f'"digest": "sha256:{rs(r, HEX, 64)}"\nsha256sum: {rs(r, HEX, 64)}'),
        ("digest", f'<script src="x.js" integrity="sha384-{b64(48)}" crossorigin="anonymous"></script>'),
        ("lockfile", f'files = [\n    {{file = "x-1.0.tar.gz", hash = "sha256:{rs(r, HEX, 64)}"}},\n]'),
        ("lockfile", f"golang.org/x/crypto v0.21.0 h1:{b64(32)}\ngolang.org/x/crypto v0.21.0/go.mod h1:{b64(32)}"),
        ("uuid", f"subscription_id: {uid(r)}\ntenant: {uid(r)}\n- {uid(r)}"),
        ("ssh-public-key", f'command="x" ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAACAQ{rs(r, B64, 700)} ci'),
        ("ssh-public-key", f"github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI{rs(r, B64, 120)}="),
        (
            "pgp-public-key",
            f"{DASHES}BEGIN PGP SIGNATURE{DASHES}\n\niQIzBAEBCAAdFiEE{rs(r, B64, 48)}\n"
            f"{DASHES}END PGP SIGNATURE{DASHES}",
        ),
        (
            "x509-certificate",
            f"{DASHES}BEGIN CERTIFICATE REQUEST{DASHES}\nMIIC{rs(r, B64, 60)}\n{DASHES}END CERTIFICATE REQUEST{DASHES}",
        ),
        (
            "public-key-pem",
            f"{DASHES}BEGIN RSA PUBLIC KEY{DASHES}\nMIIBCgKCAQEA{rs(r, B64, 52)}\n{DASHES}END RSA PUBLIC KEY{DASHES}",
        ),
        (
            "jwks-public-key",
            json.dumps({"keys": [{"kty": "EC", "crv": "P-256", "x": rs(r, URLSAFE, 43), "y": rs(r, URLSAFE, 43)}]}),
        ),
        (
            "example-key",
            "aws_access_key_id = "
            + j("AKIAI44QH8DHB", "EXAMPLE")
            + "\naws_secret_access_key = "
            + j("je7MtGbClwBF/2Zp9Utk/h3yCo8nvb", "EXAMPLEKEY"),
        ),
        (
            "example-key",
            j(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi",
                "aWF0IjoxNTE2MjM5MDIyfQ",
                ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            ),
        ),
        ("example-key", "stripe.api_key = '" + j("sk_", "test_", "4eC39HqLyjWDarjtT1zdp7dc") + "'"),
        (
            "example-key",
            "Azurite: DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
            + j("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq", "/K1SZFPTOtr/KBHBeksoGMGw==")
            + ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
        ),
        (
            "placeholder",
            "password: <your-password>\napi_key: YOUR_API_KEY_HERE\nsecret: '****'\ntoken: 'xxxxxxxxxxxxxxxx'",
        ),
        (
            "placeholder",
            "mongodb://<username>:<password>@host:27017\npostgresql://USER:PASSWORD@HOST:5432/DB\n"
            "https://${USER}:${TOKEN}@github.com/x.git\namqp://guest:guest@localhost:5672",
        ),
        (
            "placeholder",
            "curl -u $USERNAME:$PASSWORD https://x\ncurl -u user:pass https://httpbin.org/basic-auth/user/pass",
        ),
        (
            "placeholder",
            "Authorization: Bearer <token>\nAuthorization: Bearer $TOKEN\nAuthorization: Bearer YOUR_ACCESS_TOKEN",
        ),
        (
            "placeholder",
            'password = ""\ntoken = None\napi_key = os.environ.get("API_KEY")\npassword = getpass.getpass()',
        ),
        ("placeholder", f"export GITHUB_TOKEN={j('gh', 'p_')}{'X' * 36}\nexport HF_TOKEN={j('h', 'f_')}{'x' * 34}"),
        (
            "stripe-object-id",
            "sub_1MowQVLkdIwHu7ixeRlqHVzs, price_1MoBy5LkdIwHu7ixZhnattbh, evt_1NG8Du2eZvKYlo2CUI79vXWy, "
            "acct_1032D82eZvKYlo2C, pm_1MqLiJLkdIwHu7ixUEgbFdYF, seti_1Mm8s8LkdIwHu7ix0OXBfTRG",
        ),
        (
            "mermaid",
            fenced("mermaid", "flowchart LR\n  secret[(Vault)] -- password --> app\n  app -->|api_key: from env| svc"),
        ),
        ("cjk-prose", "パスワード: 1Passwordを参照\n密码：见保险库\n비밀번호: 관리자에게 문의"),
        ("prose-about-secrets", "Password requirements: at least 12 characters, one digit, one symbol (e.g. !@#$)."),
        (
            "prose-about-secrets",
            "The password is case-sensitive and auto-generated on first boot; the password is incomprehensible "
            "to most people.\npassword: see-the-vault\npassword: rotated-by-terraform\npassword: db-admin-password",
        ),
        (
            "prose-about-secrets",
            f"The SSH key fingerprint is SHA256:{rs(r, B64, 43)}. The GPG key ID is 3AA5C34371567BD2.",
        ),
        (
            "prose-about-secrets",
            "Use `--password-stdin` instead of `-p` with docker login. Never pass `--token` inline.",
        ),
        (
            "code-without-secrets",
            "const [password, setPassword] = useState('');\nheaders['Authorization'] = `Bearer ${token}`;",
        ),
        ("code-without-secrets", "password_hash = '$2b$12$" + rs(r, B64.replace("+", "."), 53) + "'"),
        (
            "config-without-secrets",
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
        ),
        (
            "config-without-secrets",
            "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nspec:\n  encryptedData:\n"
            "    password: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq" + rs(r, B64, 200),
        ),
        ("ids", f"trace_id={rs(r, HEX, 32)} span_id={rs(r, HEX, 16)}; Cloudflare zone id {rs(r, HEX, 32)}"),
        (
            "ids",
            f"SENTRY_DSN=https://examplePublicKey@o0.ingest.sentry.io/0\nSentry issue {rs(r, HEX, 32)}\n"
            f"https://{rs(r, HEX, 32)}@gitlab.example.com/group/project\nsession: {rs(r, HEX, 32)}",
        ),
        (
            "numbers",
            f"Order {rs(r, '0123456789', 16)} shipped at 1700000000000; call +44 20 7946 0958 or 415-555-0132.\n"
            "IBAN DE89 3704 0044 0532 0130 00; ISBN 978-3-16-148410-0; build 4539148803436467 passed.\n"
            "Stripe's test cards: 4242 4242 4242 4242, 4000 0025 0000 3155, 3782 822463 10005.\n"
            f"Invoice 4539 1488 0343 6468 (not a card: bad check digit); snowflake {rs(r, '0123456789', 18)}",
        ),
        (
            "x509-certificate",
            "Pinned certificate, no armour:\n" + pem_body(r, 3, "MIIDdzCCAl+gAwIBAgIJ") + "\n"
            "Public key: MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + rs(r, B64, 40) + "\n"
            "PKCS#8 keys start with MIIEvQIBADANBgkqhkiG9w0BAQEFAASC...",
        ),
        (
            "prose-about-secrets",
            "Recovery codes are stored in 1Password. Save your backup codes somewhere safe.\n"
            "The seed phrase is never stored anywhere in our systems and must be kept offline.\n"
            "Mnemonic for the OSI layers:\nplease do not throw sausage pizza away\n"
            "Backup codes: see the vault. Recovery code: 2024-01-15. Random seed 42.",
        ),
        (
            "cookie-without-secrets",
            "Cookie: theme=dark; lang=en; _ga=GA1.2.1234567890.1700000000\n"
            "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT\nCookie: session=<session-id>\n"
            f"Cookie: csrftoken={rs(r, ALNUM, 32)}\nThe session cookie is HttpOnly; sessions last 30 minutes.",
        ),
        (
            "service-account-without-key",
            fenced(
                "json",
                '{"type": "service_account", "project_id": "demo", "private_key_id": "your-private-key-id",\n'
                ' "private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n",\n'
                ' "client_email": "ci@demo.iam.gserviceaccount.com", "client_id": "123456789012345678901"}',
            ),
        ),
        ("public-key-pem", f"[Peer]\nPublicKey = {b64(32)}\nAllowedIPs = 10.0.0.2/32"),
        (
            "table-without-secrets",
            "| Service | Password |\n|---|---|\n| db | see 1Password |\n| api | `$API_PASSWORD` |\n| cache | *** |\n"
            "| web | |\n| legacy | vault:kv/legacy#pw |",
        ),
        (
            "table-without-secrets",
            "| Token | Meaning |\n|---|---|\n| EOF | end of input |\n| IDENT | an identifier |\n\n"
            "| Pin | Function |\n|---|---|\n| 1 | VCC |\n| 2 | GND |",
        ),
        (
            "table-without-secrets",
            f"| Setting | Password policy | Token TTL |\n|---|---|---|\n| prod | 12 chars | 3600 |\n\n"
            f"name,password_last_changed,key_id\nalice,2024-01-05,{rs(r, HEX, 16)}",
        ),
        (
            "prose-about-secrets",
            f"cache key {rs(r, HEX, 64)}\nThe token endpoint is https://auth.example.com/oauth2/v1/token\n\n"
            "Password\nSee the team vault.\n\n**API key:**\n`$OPENAI_API_KEY`",
        ),
        ("url-without-credentials", "docker run -p 8080:80 -e PASSWORD_FILE=/run/secrets/pw nginx\nssh -p 2222 host"),
    ]
    return [_neg(r, category, body) for category, body in items]


def all_samples(seed: int = 3) -> Iterator[Sample]:
    yield from positives(seed)
    yield from negatives(seed)
