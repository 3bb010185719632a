"""The secret gate measured blind to formats, on corpora written before its generic layer.

With the format table switched off (`format_blind`), at least `SECRET_GATE_MIN_BLIND_RECALL_PERCENT`
of the credentials of `blind_corpus` are caught, overall and in each family; with it on, at most
`SECRET_GATE_MAX_CLEAN_FALSE_POSITIVE_PERCENT` of at least `SECRET_GATE_MIN_CLEAN_NOTES` clean notes
(`clean_notes`) are flagged, and at most `SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT` of every hard
negative the tests hold. Then the classes of credentials that a format-tuned gate missed, one example
of each written here (values built at run time), all caught blind.
"""

from __future__ import annotations

import base64
import random
import urllib.parse
from collections import defaultdict

import blind_corpus
import clean_notes
import pytest
import secret_corpus
import secret_formats
from blind_contexts import LABELLED, UNLABELLED
from format_blind import format_table_off
from hypothesis import given, settings, strategies as st
from secret_corpus import checksummed, j, rs

from continuity.gate import assignments, formats, rules
from continuity.gate.secrets import scan_text
from continuity.tunables import (
    SECRET_GATE_MAX_CLEAN_FALSE_POSITIVE_PERCENT,
    SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT,
    SECRET_GATE_MIN_BLIND_RECALL_PERCENT,
    SECRET_GATE_MIN_CLEAN_NOTES,
)

ALNUM = blind_corpus.ALNUM


def test_format_blind_recall_overall_and_per_family() -> None:
    positives = blind_corpus.positives()
    caught: dict[str, list[bool]] = defaultdict(list)
    with format_table_off():
        for sample in positives:
            caught[sample.family].append(bool(scan_text(sample.text)))
    assert set(caught) == set(blind_corpus.FAMILIES)
    for family, verdicts in caught.items():
        print(f"{family:12} {sum(verdicts):4}/{len(verdicts):<4}")
        assert sum(verdicts) * 100 >= SECRET_GATE_MIN_BLIND_RECALL_PERCENT * len(verdicts), family
    everything = [v for verdicts in caught.values() for v in verdicts]
    assert sum(everything) * 100 >= SECRET_GATE_MIN_BLIND_RECALL_PERCENT * len(everything)


def test_false_positives_on_clean_engineering_notes() -> None:
    notes = clean_notes.notes()
    assert len(notes) >= SECRET_GATE_MIN_CLEAN_NOTES
    assert len({name for name, _ in clean_notes.TEMPLATES}) >= 30
    flagged = [(s.kind, scan_text(s.text)) for s in notes if scan_text(s.text)]
    assert len(flagged) * 100 <= SECRET_GATE_MAX_CLEAN_FALSE_POSITIVE_PERCENT * len(notes), flagged[:5]


def test_false_positives_on_every_hard_negative_the_tests_hold() -> None:
    texts = [s.text for s in (*secret_corpus.negatives(), *secret_corpus.variant_negatives())]
    texts += [case.text for case in secret_formats.all_cases() if not case.secret]
    flagged = [text for text in texts if scan_text(text)]
    assert len(flagged) * 100 <= SECRET_GATE_MAX_FALSE_POSITIVE_PERCENT * len(texts), flagged[:3]


def test_the_switch_turns_the_table_off_and_back_on() -> None:
    # A short format only its table row knows: 20 characters, no context.
    key = j("AK", "IA") + rs(random.Random(5), "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    note = f"found {key} in the log"
    assert scan_text(note)
    with format_table_off():
        assert rules.RULES == () and not scan_text(note)
    assert rules.RULES == formats.RULES and scan_text(note)


# --- the classes that a format-tuned gate missed, one example each -------------------------------------

R = random.Random(26)
TOKEN = checksummed(R, j("gh", "p_"))
INVENTED = f"zq_{j('li', 've')}_{rs(R, ALNUM, 40)}"
PASSWORD = "Hx7!" + rs(R, ALNUM, 8)

CLASSES = {
    # the three classes the hidden corpus still held
    "shell export of a database password in inline code": (
        f"Restore: `cd /srv/app && export PGPASSWORD='{PASSWORD}' && pg_restore -h db -U app dump.sql`"
    ),
    "a Wi-Fi passphrase in prose": "The office Wi-Fi passphrase is Greenhouse-otter-42! for the guests too.",
    "an older-format secrets-manager token": f"```\nVAULT_TOKEN=s.{rs(R, ALNUM, 24)}\n```",
    # the miss classes
    "a prefixed token bare in prose": f"Someone pasted {INVENTED} into the channel yesterday.",
    "XML element text in a CI credential store": (
        f"<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>\n"
        f"  <username>deploy</username>\n  <password>{PASSWORD}</password>\n</com.cloudbees>"
    ),
    "a default in getenv": f'key = os.getenv("ACME_API_TOKEN", "{rs(R, ALNUM, 32)}")',
    "a default after System.getenv with ?:": f'val pw = System.getenv("DB_PASS") ?: "{PASSWORD}"',
    "a default in os.environ.get": f"secret = os.environ.get('SIGNING_SECRET', '{rs(R, ALNUM, 32)}')",
    "pwd": f"pwd = '{PASSWORD}'",
    "skey": f"skey: {rs(R, ALNUM, 32)}",
    "pat": f"GH_PAT={rs(R, ALNUM, 40)}",
    "authtoken": f"authtoken={rs(R, ALNUM, 30)}",
    "Functionkey": f'"AzureWebJobsFunctionkey": "{rs(R, ALNUM, 54)}=="',
    "ACRPWD": f"ACRPWD={rs(R, ALNUM, 32)}",
    "a letter-only password under a label": "DB_PASSWORD=sunflowerharborlantern",
    "a punctuation-heavy password under a label": "smtp_pass: '#!x@@y%%z&&'",
    "ENV NAME value in a Dockerfile": "FROM alpine\nENV DB_PASSWORD Walrus-Quartz-77",
    "a token with an invisible character": f"deploy with {TOKEN[:10]}\u2060{TOKEN[10:]}",
    "base64 of a token": f"data: {base64.b64encode(INVENTED.encode()).decode()}",
    "hex of a token": f"payload={INVENTED.encode().hex()}",
    "a URL-encoded password under a label": f"password={urllib.parse.quote(PASSWORD + '&=#', safe='')}",
    "a value split across two lines": f'token = (\n    "{INVENTED[:20]}"\n    "{INVENTED[20:]}"\n)',
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_each_missed_class_is_caught_blind(name: str) -> None:
    with format_table_off():
        found = scan_text(CLASSES[name])
    assert found, name


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("authtoken", ["auth", "token"]),
        ("ACRPWD", ["acr", "pwd"]),
        ("AzureWebJobsFunctionkey", ["azure", "web", "jobs", "function", "key"]),
        ("GH_PAT", ["gh", "token"]),
        ("obs_sk", ["obs", "secretkey"]),
        ("db-password", ["db", "password"]),
    ],
)
def test_label_word_parts(name: str, parts: list[str]) -> None:
    assert assignments.word_parts(name) == parts
    assert assignments.secret_name(name)


@pytest.mark.parametrize("name", ["password_file", "token_url", "csrftoken", "monkey_id", "path", "cache_key"])
def test_names_that_are_not_secrets(name: str) -> None:
    assert assignments.secret_name(name) == ""


@pytest.mark.parametrize(
    "text",
    [
        # SOPS ciphertext, meant to be committed
        f"password: ENC[AES256_GCM,data:{rs(R, ALNUM, 44)}=,iv:{rs(R, ALNUM, 22)}==,tag:{rs(R, ALNUM, 22)}==,type:str]",
        # a WireGuard public key under its label; an SSH host key in known_hosts
        f"PublicKey = {base64.b64encode(R.randbytes(32)).decode()}",
        f"github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{base64.b64encode(R.randbytes(32)).decode()[:43]}",
        # a Kubernetes caBundle: base64 of a PEM certificate
        "caBundle: "
        + base64.b64encode(b"-----BEGIN CERTIFICATE-----\n" + base64.b64encode(R.randbytes(96)) + b"\n").decode(),
        # base64 of configuration text, not of a secret
        "settings: " + base64.b64encode(b'{"region": "eu-west-1", "replicas": 3, "features": ["a", "b"]}').decode(),
    ],
)
def test_public_material_in_generated_shapes_stays_clean(text: str) -> None:
    assert scan_text(text) == []


# --- generated: any issued-looking token in any writing context, any digest in any digest context --------

_CONTEXTS = LABELLED + UNLABELLED
_LABELS = ("API_TOKEN", "secret", "acmeKey", "x-auth-token", "clientSecret", "GH_PAT", "authtoken")


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    context=st.integers(0, len(_CONTEXTS) - 1),
    label=st.sampled_from(_LABELS),
    size=st.integers(32, 80),
)
def test_any_issued_token_in_any_context_is_caught_blind(seed: int, context: int, label: str, size: int) -> None:
    r = random.Random(seed)
    token = rs(r, "abcdefghijklmnopqrstuvwxyz", r.randint(2, 5)) + "_" + rs(r, ALNUM, size)
    if not (any(c.isupper() for c in token) and any(c.isdigit() for c in token)):
        return  # not mixed: a value of one or two classes needs its label, which unlabelled contexts lack
    _, make = _CONTEXTS[context]
    with format_table_off():
        assert scan_text(make(label, token, r)), (_CONTEXTS[context][0], label)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), size=st.sampled_from((7, 12, 32, 40, 64, 128)))
def test_any_hex_digest_in_prose_stays_clean(seed: int, size: int) -> None:
    r = random.Random(seed)
    digest = rs(r, "0123456789abcdef", size)
    for text in (
        f"Reverted {digest} after the canary failed.",
        f"checksum: {digest}",
        f"The build id is {digest.upper()}; the cache key is v2-{digest}.",
    ):
        assert scan_text(text) == [], text
