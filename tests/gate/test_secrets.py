"""The secret gate: recall and false positives on the generated corpus, no leaks, allowlist,
determinism, the detect-secrets adapter, and bounded behaviour on hostile input."""

from __future__ import annotations

import random
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from continuity.gate import rules, shapes
from continuity.gate.detectsecrets import detect_secrets_scan
from continuity.gate.secrets import SCAN_ERROR, Finding, scan_text

sys.path.insert(0, str(Path(__file__).parents[1]))
import secret_corpus as corpus

POSITIVES = corpus.positives()
NEGATIVES = corpus.negatives()


def test_corpus_is_large_and_varied() -> None:
    assert len(POSITIVES) >= 80
    assert len({s.kind for s in POSITIVES}) >= 40
    assert len(NEGATIVES) >= 80
    wanted = {
        "git-sha",
        "digest",
        "uuid",
        "ulid",
        "ssh-public-key",
        "pgp-public-key",
        "x509-certificate",
        "jwks-public-key",
        "example-key",
        "placeholder",
        "stripe-object-id",
        "mermaid",
        "cjk-prose",
        "prose-about-secrets",
        "lockfile",
    }
    assert wanted <= {s.kind for s in NEGATIVES}


def test_recall_on_secret_bearing_notes() -> None:
    missed = [s.kind for s in POSITIVES if not scan_text(s.text)]
    assert 1 - len(missed) / len(POSITIVES) >= 0.97, missed


def test_false_positives_on_hard_negatives() -> None:
    flagged = [(s.kind, [f.describe() for f in scan_text(s.text)]) for s in NEGATIVES if scan_text(s.text)]
    assert len(flagged) / len(NEGATIVES) <= 0.03, flagged


@pytest.mark.parametrize("sample", POSITIVES, ids=lambda s: s.kind)
def test_no_secret_value_in_any_rendering_of_a_finding(sample: corpus.Sample) -> None:
    findings = scan_text(sample.text)
    rendered = [
        repr(findings),
        str(findings),
        *(f.describe() for f in findings),
        *(repr(f) for f in findings),
    ]
    for text in rendered:
        assert sample.secret not in text
        # Not even a recognisable piece of it.
        assert sample.secret[:16] not in text or len(sample.secret) < 16
    for finding in findings:
        assert finding == Finding(finding.line, finding.detector)  # nothing derived from the value


@pytest.mark.parametrize("sample", POSITIVES, ids=lambda s: s.kind)
def test_a_finding_points_at_the_line_of_the_secret(sample: corpus.Sample) -> None:
    lines = sample.text.split("\n")
    first = sample.secret.split("\n")[0][:30]
    secret_lines = {n for n, line in enumerate(lines, start=1) if first in line}
    findings = scan_text(sample.text)
    # Multi-line formats (key blocks, Kubernetes documents) report the line that starts them.
    assert {f.line for f in findings} & secret_lines or any(f.line < min(secret_lines) for f in findings)


def test_describe_names_line_and_detector_only() -> None:
    assert Finding(12, "github-token").describe() == "line 12: github-token"


def test_findings_are_sorted_unique_and_deterministic() -> None:
    text = "\n".join(s.text for s in POSITIVES[:30])
    first = scan_text(text)
    assert first == scan_text(text)
    assert first == sorted(first)
    keys = [(f.line, f.detector) for f in first]
    assert len(keys) == len(set(keys))
    assert all(f.detector != SCAN_ERROR for f in first)


def test_line_numbers_count_from_the_first_line_including_frontmatter() -> None:
    token = corpus.checksummed(random.Random(7), corpus.j("gh", "p_"))
    text = f"---\nid: x\n---\n\nplain\n\nGH={token}\n"
    assert [f.line for f in scan_text(text) if f.detector == "github-token"] == [7]


def test_crlf_lone_cr_and_nul_do_not_hide_or_shift_secrets() -> None:
    sample = next(s for s in POSITIVES if s.kind == "github-classic-pat")
    lf = scan_text(sample.text)
    crlf = scan_text(sample.text.replace("\n", "\r\n"))
    assert [(f.line, f.detector) for f in lf] == [(f.line, f.detector) for f in crlf]
    assert scan_text("\x00" + sample.secret + "\x00")


def test_allowlist_pragma_allowlists_its_line_only() -> None:
    r = random.Random(11)
    one = corpus.checksummed(r, corpus.j("gh", "p_"))
    two = corpus.checksummed(r, corpus.j("gh", "p_"))
    text = f"a = {one}  # pragma: allowlist secret\nb = {two}\n"
    findings = scan_text(text)
    assert findings and {f.line for f in findings} == {2}
    assert not scan_text(f"TOKEN={one} <!-- Pragma: Allowlist Secret -->")


def test_github_and_npm_checksums() -> None:
    r = random.Random(5)
    token = corpus.checksummed(r, corpus.j("gh", "p_"))
    assert shapes.crc32_base62_ok(token[4:])
    broken = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    assert not shapes.crc32_base62_ok(broken[4:])
    # A valid checksum is accepted even when the body looks like a filler.
    body = "a" * 30
    low_entropy = corpus.j("np", "m_") + body + corpus.b62_encode(__import__("binascii").crc32(body.encode()))
    assert [f.detector for f in scan_text(low_entropy)] == ["npm-token"]
    assert not scan_text(corpus.j("gh", "p_") + "a" * 36)


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in 1Password",
        "Password: see the vault entry",
        "password_file: /run/secrets/db",
        "token: ${{ secrets.NPM_TOKEN }}",
        "api_key = os.getenv('API_KEY')",
        "api_key: Optional[str] = None",
        "postgres://user:password@localhost/app",
        "-----BEGIN OPENSSH PRIVATE KEY----- goes in ~/.ssh, never here",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "`sk-...` and `sk-ant-...` are the prefixes",
        "cus_NffrFeUfNV2Hib pi_3MtwBwLkdIwHu7ix28a3tqPa",
        "我的密码在保险库里，令牌每天轮换。",
        "the token is ....",
    ],
)
def test_hard_negatives_stay_clean(text: str) -> None:
    assert scan_text(text) == []


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("redis://:" + "Zq8xK2pL9mWv4tR7" + "@cache:6379", "url-credentials"),
        ("curl -u admin:" + "Pl4nk-Hor5e" + " https://ci", "curl-credentials"),
        ("The password is " + "Tr0ub4dor&3" + ".", "password-sentence"),
        ('"password": "' + "Xk29!pQz" + '"', "secret-assignment"),
        ("DB_PASS=" + "h7Gk2pQx9Lm", "secret-assignment"),
        ("Authorization: Bearer " + "a8F3kd92LsQ0pW7zX1cV5bN4mR6tY2uE", "bearer-token"),
    ],
)
def test_structural_detectors(text: str, detector: str) -> None:
    assert detector in {f.detector for f in scan_text(text)}


PW = "Vq7#mL2x" + "!Rt9"  # split so that no line of this file reads as an assignment


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("API key: " + "a8F3kd92LsQ0pW7zX1cV5bN4", "secret-assignment"),
        ("| DB password | " + PW + " |", "secret-assignment"),
        ('PASSWORD: str = "' + PW + '"', "secret-assignment"),
        ("mysql --password " + PW, "secret-assignment"),
        ('os.environ["API_KEY"] = "' + "a8F3kd92LsQ0pW7zX1cV5bN4" + '"', "secret-assignment"),
        ('{"password": "' + PW + '"}', "secret-assignment"),
        ("Prod DB password - " + PW, "password-sentence"),
        (PW + " is the password for the lab router", "password-sentence"),
        ("use " + PW + " as the admin password", "password-sentence"),
        ("log in with password " + PW, "password-sentence"),
        ("I changed the root password to " + PW + " yesterday", "password-sentence"),
        ("Das Passwort ist " + PW, "password-sentence"),
        ("数据库密码是" + PW, "password-sentence"),
        ("Login: admin / " + PW, "credential-pair"),
        ("machine api.example.com login me password " + PW, "netrc-password"),
        ("sshpass -p '" + PW + "' ssh host", "cli-password"),
        ("The deploy token is " + "a8F3kd92LsQ0pW7zX1cV5bN4", "secret-sentence"),
        ("twilio sid and token: " + "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6", "twilio-auth-token"),
        ('{"kty": "EC", "d": "' + "q" + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0Lz_-Xc4Vb" + '"}', "jwk-private-key"),
    ],
)
def test_prose_and_context_detectors(text: str, detector: str) -> None:
    assert detector in {f.detector for f in scan_text(text)}


@pytest.mark.parametrize("label", ["RSA ", "EC ", "DSA ", "OPENSSH ", "", "ENCRYPTED ", "PGP "])
def test_every_private_key_header_with_a_body(label: str) -> None:
    r = random.Random(label)
    kind = f"{label}PRIVATE KEY" + (" BLOCK" if label == "PGP " else "")
    block = f"-----BEGIN {kind}-----\n{corpus.pem_body(r, 2)}\n-----END {kind}-----"
    assert [f.detector for f in scan_text(block)] == ["private-key"]
    # The same header with no body, as prose mentions it, is not a key.
    assert scan_text(f"Never paste a -----BEGIN {kind}----- block into a note.") == []
    # Escaped inside a JSON string, as in a service-account file.
    escaped = block.replace("\n", "\\n")
    assert "private-key" in {f.detector for f in scan_text(f'{{"private_key": "{escaped}"}}')}


def test_documented_example_values_are_not_findings() -> None:
    for sample in corpus.negatives():
        if sample.kind == "example-key":
            assert scan_text(sample.text) == [], sample.text


def test_token_prefixes_lie_inside_token_runs() -> None:
    """The prefilter looks for prefixes only in runs of token characters; a prefix with any other
    character could never be found there."""
    run_chars = set(string.ascii_letters + string.digits + "_-.+/=~:%")
    for detector, prefixes, _pattern, _check, _bounds in rules.RULES:
        for prefix in prefixes:
            assert set(prefix) <= run_chars, (detector, prefix)
            assert rules.runs("x " + prefix + "A" * 20 + " y"), (detector, prefix)


def test_detector_ids_are_lowercase_kebab_case() -> None:
    import re

    ids = {f.detector for s in POSITIVES for f in scan_text(s.text)}
    assert len(ids) >= 40
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", d) for d in ids), ids


def test_scanning_prose_does_not_import_detect_secrets() -> None:
    code = (
        "import sys\nimport continuity.gate.secrets as s\n"
        "assert 'detect_secrets' not in sys.modules\n"
        "s.scan_text('# Notes\\nWe discussed the API key rotation and the password policy.\\n' * 50)\n"
        "s.scan_text('IBM Cloud API keys: see https://cloud.ibm.com/docs/account?topic=account-userapikey\\n')\n"
        "assert 'detect_secrets' not in sys.modules\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.stdout.strip() == "ok", result.stderr


def test_detect_secrets_adapter_on_in_memory_lines() -> None:
    from detect_secrets.settings import get_settings

    before = get_settings().json()
    r = random.Random(9)
    discord = "M" + corpus.rs(r, corpus.ALNUM, 23) + "." + corpus.rs(r, corpus.URLSAFE, 6) + "."
    discord += corpus.rs(r, corpus.URLSAFE, 27)
    found = detect_secrets_scan([(4, f"discord bot {discord}"), (9, "nothing here")])
    assert [(n, d) for n, d, _ in found] == [(4, "discord-bot-token")]
    assert found[0][2] == discord
    assert get_settings().json() == before
    findings = scan_text(f"a\nb\ndiscord: {discord}\n")
    assert "discord-bot-token" in {f.detector for f in findings}
    assert all(discord not in f.describe() for f in findings)


def test_detect_secrets_is_reached_through_its_public_api_only() -> None:
    """No private name (`_process_line_based_plugins` and the like) of detect-secrets is imported."""
    import ast
    import inspect

    from continuity.gate import detectsecrets

    tree = ast.parse(inspect.getsource(detectsecrets))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("detect_secrets")
        for alias in node.names
    ]
    assert imported == ["scan_line", "transient_settings"]
    assert all(
        not part.startswith("_")
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("detect_secrets")
        for part in (node.module or "").split(".")
    )


# --- hostile input: bounded sizes, no timing assertions ----------------------------------------------

MIB = 1024 * 1024


@pytest.mark.parametrize(
    "text",
    [
        "a" * MIB,
        "A" * MIB,
        "ghp_" * (MIB // 4),
        "://" * (MIB // 3),
        ":@" * (MIB // 2),
        "password=" * (MIB // 9),
        "password is " * (MIB // 12),
        "-----BEGIN PRIVATE KEY-----" * (MIB // 27),
        "aws " + "Ab1/" * (MIB // 4),
        "kind: Secret\ndata:\n" + "  k: " * (MIB // 5),
        "Bearer " * (MIB // 7),
        "x" * 40 + "Q~" + "y" * MIB,
        "0" * MIB + ":AA",
        "password: x\n" * 100_000,
        "key = 'abcdefgh12345678'\n" * 100_000,
        "\n" * 100_000,
        "| password |\n|---|\n" + "| Zx9!kLm2q |\n" * 50_000,
        "|" + " password |" * 5000 + "\n|" + "---|" * 5000 + "\n",
        "| token |\n|" + "-|" * (MIB // 2),
        "Password\n" * 100_000,
        "api secret " * (MIB // 11),
        "PIN " * (MIB // 4),
        "name,password\n" + "a,Zx9!kLm2q\n" * 80_000,
        "name,password\n" * 100_000,
        "| password | token |\n|---|---|\n" * 50_000,
        "Cookie: " + "session=abcdefgh12345678;" * (MIB // 25),
        "sessionid=" * (MIB // 10),
        ("https://" + "a" * 32 + "@sentry.io/1 ") * (MIB // 60),
        "4111 " * (MIB // 5),
        "4" * MIB,
        "MIIxxxxxxxxxxxxxxxxxxxxxxx " * (MIB // 27),
        ("MIIB" + "A" * 60 + "\n") * 16_000,
        "recovery codes: " + "1a2b3-c4d5e " * (MIB // 12),
        "seed phrase\n" + "abandon\n" * 100_000,
        "backup code recovery " * (MIB // 21),
        "123456-" * (MIB // 7),
    ],
    ids=lambda t: repr(t[:12]),
)
def test_pathological_input_finishes(text: str) -> None:
    findings = scan_text(text)
    assert all(isinstance(f, Finding) and f.detector != SCAN_ERROR for f in findings)


FRAGMENTS = st.sampled_from(
    [
        *sorted(shapes.words("ghp_ npm_ sk- AKIA :// : @ = \" ' ` . | $ % { } ( ) [ ] / ~ # * _ - ....")),
        *sorted(shapes.words("Q~ -us eyJ 1//0 sig= AKC Ag")),
        *("\n", "\r\n", "\r", " ", "\t", "\\n", "\x00", "\u2028", "İ", "密码", "是", " - ", "—", "->", " / "),
        *("-----BEGIN ", "PRIVATE KEY-----", "Private-Lines: 1\n", "password", "token", "key", "API key", "secret"),
        *(" is ", " is the password", "use ", " as the password", "with password ", "changed the password to "),
        *("kind: Secret", "data:", "stringData:", "Bearer ", "Basic ", "pragma: allowlist secret", "aws", "twilio"),
        *("curl -u ", "machine ", " login ", "sshpass -p ", "mysql -p", '"auth": "', '"kty"', '"d": "', "discord"),
        *("service_account", '"private_key": "', "SealedSecret", "--password", "PASSWORD: str = ", "Passwort ist "),
    ]
)
TEXTS = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(FRAGMENTS, st.text(alphabet=corpus.B64 + "_-", max_size=60)), max_size=40).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_scan_never_raises_and_is_deterministic(text: str) -> None:
    first = scan_text(text)
    assert first == scan_text(text)
    assert first == sorted(first)
    assert all(f.detector != SCAN_ERROR for f in first)
    lines = text.count("\n") + 1
    assert all(1 <= f.line <= lines for f in first)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=0, max_value=len(POSITIVES) - 1))
def test_a_secret_is_found_whatever_text_surrounds_its_line(noise: str, index: int) -> None:
    sample = POSITIVES[index]
    clean = noise.replace("\r", " ").replace("\n", " ")
    text = clean + "\n" + sample.text + "\n" + clean
    assert scan_text(sample.text) == [] or scan_text(text)


# --- shapes added later: passphrases, labels without an operator, cookies, DSNs, tables, key bodies,
# card numbers, values under a lone label. Values are assembled so that no line here reads as one.

HORSE = "-".join(["correct", "horse", "battery", "staple"])


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("password: " + HORSE, "secret-assignment"),
        ("WIFI_PASSWORD=" + "unsaid-outpost-stunned", "secret-assignment"),
        ('passphrase = "' + HORSE.replace("-", " ") + '"', "secret-assignment"),
        ("password: " + HORSE.replace("-", ""), "secret-assignment"),
        ("The wifi password is " + HORSE.replace("-", ""), "password-sentence"),
        ("The password is " + HORSE + ".", "password-sentence"),
    ],
)
def test_passphrases(text: str, detector: str) -> None:
    assert detector in {f.detector for f in scan_text(text)}


@pytest.mark.parametrize(
    "text",
    [
        "password: see-the-vault",
        "password: db-admin-password",
        "password: rotated-by-terraform",
        "password: same-as-staging",
        "password: read_write_access_level",
        "password = settings.database.admin",
        "password hint: first-pet-name-lowercase",
        "The password is case-sensitive.",
        "The password is auto-generated on first boot.",
        "the password is incomprehensible; the password is uncharacteristically long",
        "The password is straightforward to reset.",
        "The password is never-shared-with-anyone.",
        "The password is xxxxxxxxxxxxxxxxxx",
        "Das Passwort ist benutzerdefiniert",
    ],
)
def test_passphrase_look_alikes_stay_clean(text: str) -> None:
    assert scan_text(text) == []


HEX64 = "3f7a9c2e8b1d4f6a0c5e7b9d2f4a6c8e" + "1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a"


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("api secret " + HEX64, "labelled-secret"),
        ("Webhook signing key `" + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0L" + "`.", "labelled-secret"),
        ("Password\n" + PW, "labelled-secret"),
        ("**Password:**\n\n`" + PW + "`", "labelled-secret"),
        ("- API key:\n  " + "a8F3kd92LsQ0pW7zX1cV5bN4", "labelled-secret"),
        ("Passphrase\n" + HORSE.replace("-", " "), "labelled-secret"),
        ("| service | user | password |\n|---|---|---|\n| db | app | " + PW + " |", "secret-table-cell"),
        ("| Service | API key |\n| :-- | --: |\n| maps | " + "a8F3kd92LsQ0pW7zX1cV5bN4" + " |", "secret-table-cell"),
        ("| Card | PIN |\n|---|---|\n| debit | 48" + "21 |", "secret-table-cell"),
        ("name,url,username,password\nGitHub,https://github.com,alice," + PW, "secret-table-cell"),
        ("service\tuser\tpassword\ndb\tapp\t" + PW, "secret-table-cell"),
        ("service   user   password\ndb        app    " + PW, "secret-table-cell"),
    ],
)
def test_labels_without_an_operator(text: str, detector: str) -> None:
    assert detector in {f.detector for f in scan_text(text)}


@pytest.mark.parametrize(
    "text",
    [
        "cache key " + HEX64,
        "GPG key 3AA5C34371567BD2 and key id " + HEX64[:40],
        "public key " + "MCowBQYDK2VwAyEA" + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0Lz",
        "token endpoint https://auth.example.com/oauth2/v1/token/refresh",
        "the secret " + "api/v1/tokens/refresh/rotate/settings",
        "Password\nSee the team vault.\n\n**API key:**\n`$OPENAI_API_KEY`\n\nToken\nrefreshed-hourly",
        "- password\n- 2fa-recovery\n- token",
        "## Secrets\n\nNone.\n\n## Token\n\nEOF",
        "password:\n  secretKeyRef: db\n\nPassword:\nvault:kv/data/db#password",
        "| Service | Password |\n|---|---|\n| db | see 1Password |\n| api | `$API_PASSWORD` |\n| cache | *** |\n"
        "| web | |\n| legacy | vault:kv/legacy#pw |\n| old | n/a |\n| new | — |",
        "| Token | Meaning |\n|---|---|\n| EOF | end of input |\n| IDENT | identifier |\n| STRING_LITERAL | string |",
        "| Pin | Function |\n|---|---|\n| 1 | VCC |\n| 2 | GND |",
        "| Setting | Password policy | Token TTL |\n|---|---|---|\n| prod | 12 chars, 1 digit | 3600 |",
        "| Key | Action |\n|---|---|\n| Ctrl+Shift+P | command palette |",
        "| Secret | Used by |\n|---|---|\n| DB_PASSWORD | api |\n| STRIPE_KEY | billing |",
        "name,password_last_changed\nalice,2024-01-05",
        "| API key | Owner |\n|---|---|\n| key-prod-01 | alice |\n| ci_deploy_2024 | bob |\n| ro-v2 | ci |",
        "We keep the password  and the token in the vault.\nAsk  Sam  for  access.",
    ],
)
def test_label_look_alikes_stay_clean(text: str) -> None:
    assert scan_text(text) == []


SID = "8f2a9c1e7b3d4f6a" + "0e5c2b8d9a1f3e7c"


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("Cookie: session=" + SID, "session-cookie"),
        ("Cookie: sessionid=" + SID + "; csrftoken=" + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0L", "session-cookie"),
        ("sessionid=" + SID, "session-cookie"),
        ("Set-Cookie: _myapp_session=" + SID + "; Path=/; HttpOnly", "session-cookie"),
        ("curl -b 'PHPSESSID=" + SID + "' https://app.internal", "session-cookie"),
        ("connect.sid=s%3A" + SID + "." + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0L", "session-cookie"),
        ("https://" + "3b1f8a2c9d4e4f6a" + "8b0c2d4e6f8a0b1c" + "@o450000.ingest.sentry.io/5800000", "sentry-dsn"),
        ("SENTRY_DSN=https://" + SID + "@sentry.internal.example/12", "sentry-dsn"),
        ("dsn: https://" + SID + "@errors.example.com/3", "sentry-dsn"),
        ('"private_key_id": "' + "abcdef0123456789" * 2 + "abcdef01" + '"', "gcp-private-key-id"),
        ("PRIVATE_KEY_ID=" + SID + "abcdef01", "gcp-private-key-id"),
    ],
)
def test_cookies_dsns_and_key_ids(text: str, detector: str) -> None:
    assert detector in {f.detector for f in scan_text(text)}


@pytest.mark.parametrize(
    "text",
    [
        "Cookie: theme=dark; lang=en",
        "Cookie: _ga=GA1.2.1234567890.1700000000; _gid=GA1.2.987654321.1700000000",
        "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT",
        "Cookie: session=<session-id>\nsessionid=${SESSION_ID}\nsessionid=abc123",
        "Cookie: csrftoken=" + "Zx8Lm2Pw9Rt4Yu7Io1As3Df5Gh6Jk0L",
        "session: " + SID + "\nsession_id=" + SID,
        "CLAUDE_SESSION_ID=3f2a5c1e-7b3d-4f6a-8e5c-2b8d9a1f3e7c",
        "The session cookie is HttpOnly; the session lasts 30 minutes.",
        "https://examplePublicKey@o0.ingest.sentry.io/0",
        "Sentry issue " + SID + ": see https://sentry.io/organizations/acme/issues/4500000/",
        "https://" + SID + "@gitlab.example.com/group/project",
        '"private_key_id": "your-private-key-id"',
        '"private_key_id": "' + "0" * 40 + '"',
    ],
)
def test_cookie_and_dsn_look_alikes_stay_clean(text: str) -> None:
    assert scan_text(text) == []


def test_private_key_bodies_without_armour() -> None:
    r = random.Random(6)
    rsa = corpus.pem_body(r, 3, "MIIEpAIBAAKCAQEA")  # SEQUENCE { INTEGER 0, INTEGER modulus …
    pkcs8 = corpus.pem_body(r, 3, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")  # { INTEGER 0, AlgorithmIdentifier …
    encrypted = corpus.encrypted_key_body(r)  # { AlgorithmIdentifier PBES2 …, OCTET STRING }
    ec = "MHcCAQEEI" + corpus.rs(r, corpus.B64, 155)  # SEC1: { INTEGER 1, OCTET STRING key …
    ed25519 = "MC4CAQAwBQYDK2VwBCIEI" + corpus.rs(r, corpus.B64, 43)
    for text in (rsa, pkcs8, encrypted, "  key: |\n    " + ec.replace("\n", "\n    "), f"ED_KEY={ed25519}"):
        findings = scan_text(text)
        assert "private-key-body" in {f.detector for f in findings}, text
        assert all(text.split("\n")[-1][:16] not in f.describe() for f in findings)
    escaped = rsa.replace("\n", "\\n")
    assert "private-key-body" in {f.detector for f in scan_text(f'{{"key": "{escaped}"}}')}
    assert "private-key-body" in {f.detector for f in scan_text("b3BlbnNzaC1rZXktdjEAAAAA" + "Zx8L" * 30)}


def test_public_key_material_without_armour_stays_clean() -> None:
    r = random.Random(7)
    certificate = corpus.pem_body(r, 8, "MIIDdzCCAl+gAwIBAgIJ")  # SEQUENCE { SEQUENCE tbsCertificate …
    spki = corpus.pem_body(r, 6, "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA")  # { AlgorithmIdentifier, BIT STRING
    rsa_public = corpus.pem_body(r, 4, "MIIBCgKCAQEA")  # { INTEGER modulus (long) …
    csr = corpus.pem_body(r, 5, "MIICijCCAXICAQAwRTELMAkG")
    random_base64 = corpus.pem_body(r, 4, "MII")
    for text in (certificate, spki, rsa_public, csr, random_base64, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC..."):
        assert scan_text(text) == [], text
    # Inside armour a body is the private-key detector's (or public, as here), never read twice.
    body = corpus.pem_body(r, 4, "MIIEpAIBAAKCAQEA")
    assert scan_text("-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----") == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("card: {c}", True),
        ("Company card {c}, exp 09/27, CVC in 1Password", True),
        ("{dashed}", True),
        ("{amex}", True),
        ("card_number={run}", True),
        ("Visa ending 1234; full number\n{run}", True),
        ("Build {run} passed", False),  # run together, no word about cards nearby
        ("Order {order}", False),
        ("4242 4242 4242 4242 and 4000 0025 0000 3155 are Stripe's test cards", False),
        ("IBAN DE89 3704 0044 0532 0130 00", False),
        ("Order {dashed} arrived", False),  # grouped, but its line says what it is
        ("Order {dashed}, paid with the company card", True),
        ("Timestamp 1700000000000, phone +44 20 7946 0958", False),
        ("{bad_check}", False),
    ],
)
def test_payment_card_numbers(text: str, found: bool) -> None:
    r = random.Random(8)
    values = {
        "c": corpus.card(r),
        "dashed": corpus.card(r, "5412", group="-"),
        "amex": corpus.card(r, "37", 15),
        "run": corpus.card(r, "4", group=""),
        "order": "".join(r.choice(string.digits) for _ in range(16)).replace("0", "1", 1),
    }
    good = values["c"].replace(" ", "")
    wrong = good[:15] + str((int(good[15]) + 1) % 10)
    values["bad_check"] = " ".join(wrong[i : i + 4] for i in range(0, 16, 4))
    text = text.format(**values)
    findings = scan_text(text)
    assert ("payment-card" in {f.detector for f in findings}) is found, text
    assert all(good not in f.describe() for f in findings)


@pytest.mark.parametrize(
    ("text", "detector"),
    [
        ("GitHub recovery codes:\n\n{codes}", "recovery-codes"),
        ("## 2FA backup codes\n```\n{codes}\n```", "recovery-codes"),
        ("Backup codes: 4821 7730, 9156 2284, 3307 6619", "recovery-codes"),
        ("Seed phrase: {seed}", "seed-phrase"),
        ("Wallet recovery phrase\n{numbered}", "seed-phrase"),
        ("BitLocker recovery key {bitlocker}", "bitlocker-recovery-key"),
    ],
)
def test_recovery_codes_and_seed_phrases(text: str, detector: str) -> None:
    r = random.Random(10)
    seed = [r.choice(corpus.SEED_WORDS) for _ in range(12)]
    values = {
        "codes": "\n".join(f"{corpus.rs(r, corpus.HEX, 5)}-{corpus.rs(r, corpus.HEX, 5)}" for _ in range(8)),
        "seed": " ".join(seed),
        "numbered": "\n".join(f"{i}. {word}" for i, word in enumerate(seed, start=1)),
        "bitlocker": "-".join(str(11 * r.randint(1, 65535)).rjust(6, "0") for _ in range(8)),
    }
    assert detector in {f.detector for f in scan_text(text.format(**values))}


@pytest.mark.parametrize(
    "text",
    [
        "Recovery codes are stored in 1Password.",
        "Save your recovery codes somewhere safe.\n\nNext steps: enable SSO.",
        "Recovery codes:\n- regenerate after use\n- keep offline\n\nbackup code 12345678",
        "The seed phrase is never stored anywhere in our systems and must be kept offline.",
        "Mnemonic: every good boy deserves fudge\nseed phrase: twelve words written on paper in the safe at home",
        "Mnemonic for OSI layers:\nplease do not throw sausage pizza away",
        "123456-123456-123456-123456-123456-123456-123456-123456",
        "random seed 42; phrase search enabled",
    ],
)
def test_recovery_code_look_alikes_stay_clean(text: str) -> None:
    assert scan_text(text) == []
