"""Hostile vault content found by attacking the startup brief: each case leaked a secret or crashed.

Token values are built at run time (random body, valid checksum) so that this file holds no
token-shaped text of its own.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
import secret_corpus
from briefkit import (
    HANDOFF_DIR,
    SOURCE_REL,
    cold_brief,
    handoff_note,
    hot_note,
    make_vault,
    reasons,
    write,
)
from conftest import write_connection

from continuity.errors import NoteError
from continuity.gate.secrets import scan_text
from continuity.memory import handoff
from continuity.vault import access as vault_access, layout, notes


def github_token() -> str:
    """A fresh GitHub personal access token shape: 30 random base62 characters and their CRC32."""
    return secret_corpus.checksummed(random.Random(20250101), "ghp" + "_")


def stripe_key() -> str:
    rng = random.Random(7)
    return "sk" + "_live_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def math_bold(text: str) -> str:
    return "".join(chr(0x1D41A + ord(c) - 97) if "a" <= c <= "z" else c for c in text)


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


# --- the secret gate sees what the brief shows --------------------------------------------------------


@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param(lambda t: math_bold(t[:8]) + t[8:], id="math-bold-prefix"),
        pytest.param(fullwidth, id="fullwidth"),
        pytest.param(lambda t: t[:10] + "\u200b" + t[10:], id="zero-width-space"),
        pytest.param(lambda t: t[:10] + "\u00ad" + t[10:], id="soft-hyphen"),
    ],
)
def test_a_token_disguised_by_unicode_is_still_a_secret(vault_root: Path, disguise) -> None:  # type: ignore[no-untyped-def]
    token = stripe_key()
    assert scan_text(f"billing: {disguise(token)}\n")
    write(vault_root, SOURCE_REL["soul"], hot_note("soul", f"billing {disguise(token)}"))
    brief = cold_brief(vault_root)
    assert reasons(brief)["soul"] == "secret"
    assert token not in brief.text
    assert token[10:] not in brief.text


# --- parser messages never quote the note --------------------------------------------------------------


@pytest.mark.parametrize("front", ["k: !{t} x", "k: !!{t} x", "k: !<{t}> x", "k: !!timestamp {t}"])
def test_a_frontmatter_error_never_quotes_the_value(vault_root: Path, front: str) -> None:
    token = github_token()
    text = f"---\ntype: project\nproject: demo-app\n{front.format(t=token)}\n---\n## Brief\n\nx\n"
    with pytest.raises(NoteError) as caught:
        notes.parse_note(text.encode(), "10-project/demo-app/PROJECT.md")
    assert token[4:] not in str(caught.value)
    write(vault_root, SOURCE_REL["project"], text)
    brief = cold_brief(vault_root)
    assert reasons(brief)["project"] == "invalid"
    assert token[4:] not in json.dumps(brief.to_json())


def test_a_parser_crash_is_an_invalid_note_not_an_unavailable_brief(vault_root: Path) -> None:
    """`!!bool maybe` made ruamel.yaml raise KeyError, which turned the whole brief unavailable."""
    write(vault_root, SOURCE_REL["soul"], "---\ntype: soul\nk: !!bool maybe\n---\n## Brief\n\nx\n")
    with pytest.raises(NoteError):
        notes.parse_note((vault_root / SOURCE_REL["soul"]).read_bytes(), SOURCE_REL["soul"])
    brief = cold_brief(vault_root)
    assert brief.status == "partial"
    assert reasons(brief)["soul"] == "invalid"
    assert reasons(brief)["project"] is None


# --- handoff file names and metadata are shown, so they are gated too -------------------------------------


def test_a_secret_in_the_current_handoffs_file_name_is_withheld(vault_root: Path) -> None:
    token = github_token()
    for rel in list((vault_root / HANDOFF_DIR).iterdir()):
        rel.unlink()
    write(vault_root, f"{HANDOFF_DIR}/20250102T030405Z-dev-a-{token}.md", handoff_note())
    write(vault_root, f"{HANDOFF_DIR}/20240102T030405Z-dev-a-older.md", handoff_note("2024-01-02T03:04:05Z", hid="old"))
    brief = cold_brief(vault_root)
    assert reasons(brief)["handoff"] == "secret"
    document = json.dumps(brief.to_json())
    assert token not in document
    assert "h-old" not in brief.text  # no older handoff in its place
    assert "file name withheld" in document


def test_a_handoff_summary_withholds_secret_like_values_and_names(vault_root: Path) -> None:
    token = github_token()
    write(vault_root, f"{HANDOFF_DIR}/20250102T030405Z-dev-a-{token}.md", handoff_note(extra_meta={"title": token}))
    listing = handoff.list_handoffs(vault_root, None)
    assert listing.handoffs
    assert token not in json.dumps([handoff.summary(item) for item in listing.handoffs])


# --- no listing through a linked parent folder ---------------------------------------------------------------


def test_no_listing_through_a_linked_parent_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "handoffs/20990101T000000Z-dev-a-outsidename.md", handoff_note())
    root = tmp_path / "vault"
    root.mkdir()
    (root / "20-state").symlink_to(outside)
    assert vault_access.list_notes(root, layout.HANDOFFS) == []


def test_doctor_and_warnings_withhold_a_secret_in_a_file_name(vault_root: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from continuity.cli import app
    from continuity.local import connection

    token = github_token()
    write(vault_root, f"{HANDOFF_DIR}/20250102T030405Z-dev-a-{token}.md", "---\nbroken: [\n---\n")
    write(vault_root, f"{HANDOFF_DIR}/.x-{token}.md.0123456789ab.tmp", "half")
    conn = tmp_path / "connection.yaml"
    write_connection(conn, connection.render_connection(vault_root, "dev-a", "demo-app", None))
    runner = CliRunner()
    env = {connection.ENV_CONNECTION: str(conn)}
    for args in (["doctor", "--json"], ["doctor"], ["handoff", "list"], ["handoff", "list", "--all"]):
        result = runner.invoke(app, args, prog_name="lifecycle", env=env)
        assert token not in result.stdout + result.stderr, args
    doc = json.loads(runner.invoke(app, ["doctor", "--json"], prog_name="lifecycle", env=env).stdout)
    assert any("withheld" in check["message"] for check in doc["checks"])


def test_a_url_password_with_raw_hash_or_question_mark_is_a_secret() -> None:
    from continuity.gate.secrets import scan_text

    password = "Vq7#mZ2!pLx9" + "wR?k"
    found = scan_text(f"db: postgres://app_user:{password}@db.prod.internal:5432/app")
    assert [f.detector for f in found] == ["url-credentials"]
    assert password not in repr(found)
    assert scan_text("see https://example.com:8080/path?q=a@b for details") == []


def test_the_allowlist_pragma_on_a_key_header_does_not_let_the_key_through() -> None:
    import base64
    import random

    from continuity.gate.secrets import scan_text

    body = base64.b64encode(random.Random(5).randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    kind = "RSA " + "PRIVATE KEY"
    block = [f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"]
    pragma = "  # pragma: allowlist secret"
    only_header = "\n".join([block[0] + pragma, *block[1:]])
    assert [f.detector for f in scan_text(only_header)] == ["private-key"]
    every_line = "\n".join(line + pragma for line in block)
    assert scan_text(every_line) == []
