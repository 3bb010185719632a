"""A positive corpus for measuring the secret gate blind to formats: credentials as people write them.

Written before the gate's generic layer, and kept apart from `secret_corpus` and `secret_formats`,
which were written alongside the format table. Each credential kind has an issuer-like shape (some
follow a real service's format, many are invented prefixes and bodies that no table holds), a label a
person would give it, and is placed in one of many writing contexts: env, YAML, JSON, TOML, INI, XML
element and attribute, code defaults, Dockerfile, command-line flags, headers, prose with and
without a label, inline code among other commands, a table, a value split over two lines, encoded
forms. Nothing here is a real credential; every value is generated from a seed at run time, and no
whole token is written in this file.

`positives(seed)` returns `Sample`s grouped into the nine families the bench reports.
"""

# ruff: noqa: E501  (data: one generated note shape a line reads better than a wrapped one)

from __future__ import annotations

import base64
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable

from blind_contexts import LABELLED, MULTILINE, PROSE_PASSWORDS, UNLABELLED
from secret_corpus import Sample, checksummed, encrypted_key_body, j, pem, pem_body, rs

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
B62 = ALNUM
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
B32 = UPPER + "234567"
WORDS = [
    "amber",
    "anchor",
    "basil",
    "birch",
    "cactus",
    "cedar",
    "clover",
    "comet",
    "copper",
    "coral",
    "cricket",
    "dune",
    "ember",
    "fable",
    "fern",
    "fjord",
    "garnet",
    "ginger",
    "glacier",
    "harbor",
    "hazel",
    "heron",
    "indigo",
    "iris",
    "jasper",
    "juniper",
    "kestrel",
    "lagoon",
    "lantern",
    "lilac",
    "lotus",
    "maple",
    "marble",
    "meadow",
    "mint",
    "nectar",
    "nimbus",
    "oasis",
    "olive",
    "onyx",
    "orchid",
    "otter",
    "pebble",
    "pepper",
    "pine",
    "plum",
    "quartz",
    "raven",
    "reef",
    "saffron",
    "sage",
    "sierra",
    "sparrow",
    "spruce",
    "thistle",
    "tundra",
    "velvet",
    "willow",
    "yarrow",
    "zephyr",
]

Gen = Callable[[random.Random], str]


def g(prefix: str, alphabet: str, n: int, suffix: str = "") -> Gen:
    return lambda r: prefix + rs(r, alphabet, n) + suffix


def word_password(r: random.Random) -> str:
    """Letters only: two or three words run together, as people choose them."""
    return "".join(r.sample(WORDS, r.randint(2, 3)))


def punct_password(r: random.Random) -> str:
    return rs(r, ALNUM, r.randint(4, 6)) + rs(r, "!#$%&*+-=?@^_~", r.randint(3, 5)) + rs(r, ALNUM, 3)


def human_password(r: random.Random) -> str:
    return r.choice(WORDS).capitalize() + str(r.randint(10, 9999)) + r.choice("!#%&*?@.")


def diceware(r: random.Random) -> str:
    return r.choice("- ").join(r.sample(WORDS, 4)) if r.random() < 0.5 else "-".join(r.sample(WORDS, 5))


def pin(r: random.Random) -> str:
    digits = rs(r, DIGITS, r.choice((4, 6, 8)))
    return digits if len(set(digits)) > 2 else pin(r)


def azure_conn(r: random.Random) -> str:
    key = rs(r, B64, 86) + "=="
    return f"DefaultEndpointsProtocol=https;AccountName=st{rs(r, LOWER, 8)};AccountKey={key};EndpointSuffix=core.windows.net"


def servicebus(r: random.Random) -> str:
    return (
        f"Endpoint=sb://ns-{rs(r, LOWER, 6)}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={rs(r, B64, 43)}="
    )


def url_cred(scheme: str, user: str, host: str, secret: Gen) -> Gen:
    return lambda r: f"{scheme}://{user}:{secret(r)}@{host}"


def jdbc(r: random.Random) -> str:
    return (
        f"jdbc:sqlserver://db{r.randint(1, 9)}.internal:1433;databaseName=orders;user=app;password={human_password(r)}"
    )


def adonet(r: random.Random) -> str:
    return f"Server=tcp:sql-{rs(r, LOWER, 5)}.database.windows.net,1433;User ID=svc;Password={punct_password(r)};"


def private_key(kind: str, first: str = "MII") -> Gen:
    return lambda r: pem(kind, pem_body(r, r.randint(6, 14), first))


def encrypted_key(r: random.Random) -> str:
    return pem("ENCRYPTED", encrypted_key_body(r))


def json_escaped_key(r: random.Random) -> str:
    return pem("RSA", pem_body(r, 8)).replace("\n", "\\n")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


TOKEN_GENS: dict[str, Gen] = {
    "github": lambda r: checksummed(r, j("gh", r.choice("pousr"), "_")),
    "slack": lambda r: j("xox", r.choice("bp"), "-") + f"{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-{rs(r, ALNUM, 24)}",
    "stripe": g(j("sk", "_live_"), ALNUM, 99),
    "invented": lambda r: f"{rs(r, LOWER, 3)}_{r.choice(('live', 'prod', 'sk'))}_{rs(r, ALNUM, 40)}",
}

# (family, kind, labels a person would use, value generator)
KINDS: tuple[tuple[str, str, tuple[str, ...], Gen], ...] = (
    ("cloud", "aws-secret-key", ("AWS_SECRET_ACCESS_KEY", "aws_secret_key", "secretKey"), g("", B64, 40)),
    ("cloud", "aws-session", ("AWS_SESSION_TOKEN", "sessionToken"), g("IQoJb3JpZ2luX2Vj", B64, 300)),
    ("cloud", "azure-storage", ("AZURE_STORAGE_KEY", "storageAccountKey", "AccountKey"), g("", B64, 86, "==")),
    ("cloud", "azure-client-secret", ("AZURE_CLIENT_SECRET", "clientSecret"), g("", ALNUM + "~._-", 40)),
    ("cloud", "gcp-api-key", ("GOOGLE_API_KEY", "gcpApiKey"), g(j("AI", "za"), URLSAFE, 35)),
    ("cloud", "tencent-secret", ("TENCENTCLOUD_SECRET_KEY", "skey"), g("", ALNUM, 32)),
    ("cloud", "huawei-sk", ("HUAWEICLOUD_SDK_SK", "obs_sk"), g("", ALNUM, 40)),
    ("cloud", "linode-token", ("LINODE_TOKEN", "linode_pat"), g("", HEX, 64)),
    ("cloud", "hetzner-token", ("HCLOUD_TOKEN", "hcloud-token"), g("", ALNUM, 64)),
    ("cloud", "oci-auth-token", ("OCI_AUTH_TOKEN", "authtoken"), g("", ALNUM + "()<>:;.+-_", 20)),
    ("source", "github", ("GITHUB_TOKEN", "GH_PAT", "pat"), TOKEN_GENS["github"]),
    (
        "source",
        "github-fine",
        ("GITHUB_PAT", "token"),
        g(j("github", "_pat_"), ALNUM, 22, "_" + rs(random.Random(1), ALNUM, 59)),
    ),
    ("source", "gitlab", ("GITLAB_TOKEN", "CI_JOB_PAT"), g(j("gl", "pat-"), URLSAFE, 20)),
    ("source", "bitbucket-app-pw", ("BITBUCKET_APP_PASSWORD", "bbAppPassword"), g(j("AT", "BB"), ALNUM, 32)),
    (
        "source",
        "azure-devops-pat",
        ("AZURE_DEVOPS_PAT", "AZDO_PAT", "ado_pat"),
        g("", "abcdefghijklmnopqrstuvwxyz234567", 52),
    ),
    ("source", "gitea-token", ("GITEA_TOKEN", "giteaToken"), g("", HEX, 40)),
    ("source", "gitee-token", ("GITEE_ACCESS_TOKEN",), g("", HEX, 32)),
    ("chat", "slack", ("SLACK_BOT_TOKEN", "slackToken"), TOKEN_GENS["slack"]),
    (
        "chat",
        "slack-webhook",
        ("SLACK_WEBHOOK_URL", "webhook"),
        lambda r: (
            f"https://hooks.slack.com/services/T{rs(r, UPPER + DIGITS, 8)}/B{rs(r, UPPER + DIGITS, 8)}/{rs(r, ALNUM, 24)}"
        ),
    ),
    (
        "chat",
        "discord-webhook",
        ("DISCORD_WEBHOOK",),
        lambda r: f"https://discord.com/api/webhooks/{rs(r, DIGITS, 18)}/{rs(r, URLSAFE, 68)}",
    ),
    ("chat", "telegram", ("TELEGRAM_BOT_TOKEN", "botToken"), lambda r: f"{rs(r, DIGITS, 10)}:AA{rs(r, URLSAFE, 33)}"),
    (
        "chat",
        "mattermost-webhook",
        ("MATTERMOST_HOOK",),
        lambda r: f"https://chat.example.org/hooks/{rs(r, LOWER + DIGITS, 26)}",
    ),
    ("chat", "zulip-key", ("ZULIP_API_KEY", "zulip_key"), g("", ALNUM, 32)),
    ("chat", "twilio-auth", ("TWILIO_AUTH_TOKEN", "authToken"), g("", HEX, 32)),
    ("chat", "line-channel", ("LINE_CHANNEL_ACCESS_TOKEN",), g("", B64, 171, "=")),
    ("chat", "pushover", ("PUSHOVER_TOKEN", "po_app_token"), g("a", LOWER + DIGITS, 29)),
    (
        "chat",
        "gchat-webhook",
        ("GCHAT_WEBHOOK",),
        lambda r: (
            f"https://chat.googleapis.com/v1/spaces/{rs(r, ALNUM, 11)}/messages?key={j('AI', 'za')}{rs(r, URLSAFE, 35)}&token={rs(r, URLSAFE, 43)}"
        ),
    ),
    ("payment", "stripe", ("STRIPE_SECRET_KEY", "stripeKey"), TOKEN_GENS["stripe"]),
    ("payment", "stripe-restricted", ("STRIPE_RK",), g(j("rk", "_live_"), ALNUM, 99)),
    ("payment", "stripe-webhook", ("STRIPE_WEBHOOK_SECRET", "whsec"), g(j("wh", "sec_"), ALNUM, 32)),
    ("payment", "paypal-secret", ("PAYPAL_CLIENT_SECRET", "paypalSecret"), g("E", URLSAFE, 79)),
    ("payment", "braintree-private", ("BRAINTREE_PRIVATE_KEY", "bt_private_key"), g("", HEX, 32)),
    ("payment", "adyen", ("ADYEN_API_KEY", "adyenKey"), g("AQE", ALNUM + "+/=", 150)),
    ("payment", "razorpay-secret", ("RAZORPAY_KEY_SECRET", "rzpSecret"), g("", ALNUM, 24)),
    ("payment", "mollie", ("MOLLIE_API_KEY",), g(j("live", "_"), ALNUM, 30)),
    ("payment", "checkout", ("CKO_SECRET_KEY",), lambda r: j("sk", "_") + str(uuid.UUID(int=r.getrandbits(128)))),
    ("payment", "square", ("SQUARE_ACCESS_TOKEN",), g(j("EA", "AA"), URLSAFE, 60)),
    ("api", "openai", ("OPENAI_API_KEY",), g(j("sk", "-proj-"), URLSAFE, 120)),
    ("api", "anthropic", ("ANTHROPIC_API_KEY",), g(j("sk", "-ant-api03-"), URLSAFE, 93, "AA")),
    ("api", "sendgrid", ("SENDGRID_API_KEY",), lambda r: f"{j('S', 'G.')}{rs(r, URLSAFE, 22)}.{rs(r, URLSAFE, 43)}"),
    ("api", "datadog", ("DD_API_KEY", "DD_APP_KEY", "datadogKey"), g("", HEX, 40)),
    ("api", "invented-prefix", ("ACME_API_KEY", "acmeKey", "key"), TOKEN_GENS["invented"]),
    (
        "api",
        "invented-dotted",
        ("VENDOR_TOKEN", "vendorToken"),
        lambda r: f"{rs(r, LOWER, 2)}.{rs(r, LOWER, 2)}.{rs(r, ALNUM, 44)}",
    ),
    ("api", "vault-legacy", ("VAULT_TOKEN", "vaultToken"), g("s.", ALNUM, 24)),
    ("api", "functions-key", ("AzureWebJobsFunctionkey", "Functionkey", "x-functions-key"), g("", URLSAFE, 54, "==")),
    (
        "api",
        "license-key",
        ("LICENSE_KEY", "licenseKey"),
        lambda r: "-".join(rs(r, UPPER + DIGITS, 5) for _ in range(5)),
    ),
    ("api", "session-cookie", ("SESSION_SECRET", "session_cookie"), g("", URLSAFE, 48)),
    ("api", "signing-secret", ("SIGNING_SECRET", "hmacSecret"), g("", B64, 43, "=")),
    ("password", "word-password", ("DB_PASSWORD", "password", "pwd", "ACRPWD", "adminPwd"), word_password),
    ("password", "punct-password", ("MYSQL_ROOT_PASSWORD", "passwd", "smtp_pass", "PASS"), punct_password),
    ("password", "human-password", ("POSTGRES_PASSWORD", "password", "keystorePassword", "PGPASSWORD"), human_password),
    ("password", "passphrase", ("passphrase", "GPG_PASSPHRASE", "wifi_passphrase"), diceware),
    ("password", "pin", ("PIN", "pin_code", "SIM_PIN"), pin),
    ("private-key", "rsa", ("private_key", "ssh_key"), private_key("RSA")),
    ("private-key", "ec", ("EC_KEY", "signing_key"), private_key("EC", "MHc")),
    ("private-key", "openssh", ("deploy_key", "id_ed25519"), private_key("OPENSSH", "b3BlbnNzaC1rZXktdjEAAAAA")),
    ("private-key", "pkcs8", ("TLS_KEY", "privateKey"), private_key("")),
    ("private-key", "encrypted", ("key_pem",), encrypted_key),
    ("private-key", "json-escaped", ("private_key",), json_escaped_key),
    (
        "connection",
        "postgres",
        ("DATABASE_URL", "dsn"),
        url_cred("postgresql", "app", "db.internal:5432/app", human_password),
    ),
    (
        "connection",
        "mongodb",
        ("MONGO_URI", "mongoUrl"),
        url_cred("mongodb+srv", "svc", "cluster0.abcd.mongodb.net/prod", g("", ALNUM, 16)),
    ),
    ("connection", "redis", ("REDIS_URL",), url_cred("rediss", "default", "cache.internal:6380/0", g("", ALNUM, 32))),
    (
        "connection",
        "amqp",
        ("AMQP_URL", "broker_url"),
        url_cred("amqp", "worker", "mq.internal:5672/%2f", word_password),
    ),
    (
        "connection",
        "https-userinfo",
        ("REPO_URL", "remote"),
        url_cred("https", "oauth2", "git.example.com/team/app.git", g("", ALNUM, 40)),
    ),
    ("connection", "jdbc", ("JDBC_URL", "spring.datasource.url"), jdbc),
    ("connection", "adonet", ("ConnectionStrings__Default", "connectionString"), adonet),
    ("connection", "azure-storage-conn", ("AZURE_STORAGE_CONNECTION_STRING",), azure_conn),
    ("connection", "servicebus", ("SERVICEBUS_CONNECTION",), servicebus),
)


def _encoded(r: random.Random) -> tuple[str, str, str]:
    """(kind, value as written, label): a credential in a form that hides its own shape."""
    how = r.choice(("base64-token", "base64-userpass", "hex-token", "percent", "invisible", "fullwidth"))
    token = r.choice(list(TOKEN_GENS.values()))(r)
    if how == "base64-token":
        return how, b64(token), r.choice(("API_TOKEN_B64", "token", "data"))
    if how == "base64-userpass":
        return how, b64(f"deploy:{human_password(r)}"), r.choice(("REGISTRY_AUTH", "auth", "credentials"))
    if how == "hex-token":
        return how, token.encode().hex(), r.choice(("TOKEN_HEX", "secret", "payload"))
    if how == "percent":
        return how, urllib.parse.quote(punct_password(r) + rs(r, ALNUM, 8), safe=""), "password"
    if how == "invisible":
        at = r.randint(6, len(token) - 6)
        return how, token[:at] + r.choice(("\u200b", "\u034f", "\ufe0f", "\u2060", "\u00ad")) + token[at:], "token"
    return how, "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in token), "token"


def _frontmatter(r: random.Random) -> str:
    return f"---\nid: note-{r.randint(1000, 99999)}\ntype: {r.choice(('fact', 'session', 'handoff'))}\n---\n"


def _note(r: random.Random, body: str) -> str:
    head = r.choice(("Deploy notes", "Migration log", "Onboarding", "Incident follow-up", "Vendor setup"))
    lead = r.choice(
        (
            "Worked through the checklist with the team.",
            "Writing this down before I forget.",
            "Context for whoever picks this up next.",
        )
    )
    return f"{_frontmatter(r)}# {head}\n\n{lead}\n\n{body}\n\nNext: run the smoke tests.\n"


PER_KIND = 9


def positives(seed: int = 26) -> list[Sample]:
    """Every kind in `PER_KIND` contexts, labelled and not, and encoded forms; deterministic per seed."""
    r = random.Random(seed)
    out: list[Sample] = []
    for family, kind, labels, gen in KINDS:
        for _ in range(PER_KIND * (3 if family == "password" else 1)):
            value, label = gen(r), r.choice(labels)
            if family == "private-key":
                contexts = MULTILINE if "\n" in value else LABELLED
            elif family == "password":
                contexts = LABELLED + (PROSE_PASSWORDS if kind == "passphrase" else ())
            else:
                contexts = LABELLED + UNLABELLED
            name, context = r.choice(contexts)
            out.append(Sample(f"{kind}/{name}", family, _note(r, context(label, value, r)), value))
    for _ in range(PER_KIND * 8):
        kind, value, label = _encoded(r)
        name, context = r.choice(LABELLED + UNLABELLED)
        out.append(Sample(f"{kind}/{name}", "encoded", _note(r, context(label, value, r)), value))
    return out


FAMILIES = ("cloud", "source", "chat", "payment", "api", "password", "private-key", "connection", "encoded")
FAMILY_NAMES = {
    "cloud": "cloud keys",
    "source": "source-hosting tokens",
    "chat": "chat and webhook tokens",
    "payment": "payment keys",
    "api": "other prefixed API keys",
    "password": "passwords under a label",
    "private-key": "private keys",
    "connection": "connection strings, URLs",
    "encoded": "encoded forms",
}
