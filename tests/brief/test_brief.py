"""The startup brief: sources per event, caps, gates, handoff choice, ceilings, JSON, render commands."""

from __future__ import annotations

import hashlib
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from briefkit import (
    CASES,
    DEFAULT_HANDOFF,
    DEVICE,
    HANDOFF_DIR,
    INDEX_MARK,
    MARK,
    OTHER_DEVICE_MARK,
    POLICY_MARK,
    PROJECT,
    SECRET_VALUES,
    SESSION,
    SOURCE_REL,
    SUBAGENT,
    WARM_MARK,
    Case,
    assert_wrapper,
    aws_lines,
    cold_brief,
    connect,
    connection_file,
    handoff_note,
    hot_note,
    included,
    make_vault,
    printable_ascii,
    reasons,
    snapshot,
    startup_script,
    subprocess_env,
    write,
)
from conftest import git, use_connection
from typer.testing import CliRunner

from continuity import limits, names
from continuity.brief import build, render, sources
from continuity.cli import app
from continuity.memory import handoff
from continuity.vault import registry

# Each event's sources, in the brief's order and in the order they are left out under a ceiling.
SHOWN = {event: registry.names(registry.shown_in(event)) for event in names.START_EVENTS}
LEFT_OUT = {event: registry.names(registry.left_out_order(event)) for event in names.START_EVENTS}
SOURCE_KEYS = {"name", "path", "bytes", "sha256", "included", "reason"}
TOP_KEYS = {
    "version",
    "event",
    "status",
    "bytes",
    "chars",
    "tokens_estimate",
    "ceiling_bytes",
    "sources",
    "notices",
    "brief",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def cli_render(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["render", *args], prog_name="lifecycle")
    return result.exit_code, result.stdout, result.stderr


def render_json(*args: str) -> tuple[int, dict[str, object]]:
    code, out, _ = cli_render("--format", "json", *args)
    return code, json.loads(out)


# ------------------------------------------------------------------------------------- the catalogue


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_status_and_reasons(vault: Path, case: Case) -> None:
    case.mutate(vault)
    brief = cold_brief(vault)
    assert (brief.status, reasons(brief)) == (case.status, case.expect)
    assert_wrapper(brief.text, len(included(brief)))
    assert brief.bytes <= limits.SESSION_START_CEILING_BYTES
    for name, reason in case.expect.items():
        if reason is None:
            assert MARK[name] in brief.text, name
        else:
            assert MARK[name] not in brief.text, name
            if reason != "missing" or name != "handoff":
                # every left-out source is named in a notice with its reason's explanation
                assert any(n.startswith(name + " ") or f"{name} (" in n for n in brief.notices), (name, brief.notices)
    for secret in SECRET_VALUES:
        assert secret not in brief.text
        assert secret not in json.dumps(brief.to_json())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("harness", names.HARNESSES)
def test_case_subagent_never_carries_soul_or_preferences(vault: Path, case: Case, harness: str) -> None:
    case.mutate(vault)
    brief = cold_brief(vault, SUBAGENT, harness)
    assert [s.name for s in brief.sources] == ["project", "device", "handoff"]
    assert MARK["soul"] not in brief.text and MARK["preferences"] not in brief.text
    assert 'name="soul"' not in brief.text and 'name="preferences"' not in brief.text
    assert brief.bytes <= limits.SUBAGENT_START_CEILING_BYTES
    assert_wrapper(brief.text, len(included(brief)))


def test_restored_brief_shape(vault: Path) -> None:
    brief = cold_brief(vault)
    assert brief.status == "restored"
    lines = brief.text.split("\n")
    assert lines[0] == '<private-memory event="SessionStart" status="restored">'
    assert lines[-1] == "</private-memory>"
    assert lines[1] == render.AUTHORITY  # the authority order comes first, before any source
    opened = [line for line in lines if line.startswith("<source ")]
    assert opened == [
        f'<source name="{name}" path="{path}">' for name, path in [*SOURCE_REL.items(), ("handoff", DEFAULT_HANDOFF)]
    ]
    # Only compact parts: warm sections, INDEX, MEMORY_POLICY, inbox and other devices never appear.
    for absent in (WARM_MARK, INDEX_MARK, POLICY_MARK, OTHER_DEVICE_MARK, "## Completed work", "Ignore prior"):
        assert absent not in brief.text
    # The handoff's completed work stays warm, and the brief says where it is.
    shown = handoff.COMPLETED_ELSEWHERE.format(id=handoff.id_for_name(DEFAULT_HANDOFF.rsplit("/", 1)[-1]))
    assert shown in brief.text
    assert "Notices:" not in brief.text


def test_whole_body_when_no_brief_section(vault: Path) -> None:
    write(vault, SOURCE_REL["soul"], "---\ntype: soul\n---\n# Soul\n\nbodyonly-marker first\n\n### deeper\nmore\n")
    text = cold_brief(vault).text
    assert "bodyonly-marker first" in text and "### deeper\nmore" in text


def test_brief_section_any_case_and_until_next_level_two(vault: Path) -> None:
    body = "# Soul\n\n## bRiEf\n\ninside-brief\n\n### sub\nstill-inside\n\n## Other\n\noutside-brief\n"
    write(vault, SOURCE_REL["soul"], "---\ntype: soul\n---\n" + body)
    text = cold_brief(vault).text
    assert "inside-brief" in text and "still-inside" in text
    assert "outside-brief" not in text


# ---------------------------------------------------------------------------------------- caps


@pytest.mark.parametrize("name", ["soul", "preferences", "project", "device"])
def test_each_oversized_source_is_left_out_whole_while_others_render(vault: Path, name: str) -> None:
    cap = registry.BY_NAME[name].cap_bytes
    text = hot_note(name)
    write(vault, SOURCE_REL[name], text + "x" * (cap + 1 - len(text.encode())))
    assert (vault / SOURCE_REL[name]).stat().st_size == cap + 1
    brief = cold_brief(vault)
    assert reasons(brief)[name] == "too_large"
    assert brief.status == "partial"
    assert included(brief) == [n for n in SHOWN[SESSION] if n != name]
    assert MARK[name] not in brief.text
    view = next(s for s in brief.sources if s.name == name)
    assert view.size == cap + 1 and view.sha256 is None and view.path == SOURCE_REL[name]
    notice = next(n for n in brief.notices if n.startswith(name))
    assert "too_large" in notice or "over its cap" in notice


@pytest.mark.parametrize("name", ["soul", "preferences", "project", "device"])
def test_a_source_exactly_at_its_cap_is_read(vault: Path, name: str) -> None:
    cap = registry.BY_NAME[name].cap_bytes
    text = hot_note(name).encode()
    write(vault, SOURCE_REL[name], text + b"z" * (cap - len(text) - 1) + b"\n")
    assert (vault / SOURCE_REL[name]).stat().st_size == cap
    brief = cold_brief(vault)
    assert reasons(brief)[name] is None and MARK[name] in brief.text


def test_total_cap_leaves_out_in_ceiling_order(vault: Path) -> None:
    """Raw sizes over 64 KiB in all: whole sources go in the ceiling order, as `too_large`."""
    for name in ("soul", "preferences", "project", "device"):
        write(vault, SOURCE_REL[name], hot_note(name, notes=printable_ascii(registry.BY_NAME[name].cap_bytes - 400)))
    big_handoff = handoff_note().replace(f"{WARM_MARK} done.", printable_ascii(limits.HANDOFF_CAP_BYTES - 1024))
    write(vault, DEFAULT_HANDOFF, big_handoff)
    raw = {s.name: s.size or 0 for s in cold_brief(vault).sources}
    assert sum(raw.values()) > limits.STARTUP_TOTAL_CAP_BYTES
    brief = cold_brief(vault)
    assert [s.name for s in brief.sources if s.reason == "too_large"] == ["preferences", "device", "handoff"]
    assert sum(s.size or 0 for s in brief.sources if s.included) <= limits.STARTUP_TOTAL_CAP_BYTES
    assert included(brief) == ["soul", "project"]
    assert brief.status == "partial"
    for name in ("device", "preferences", "handoff"):
        notice = next(n for n in brief.notices if n.startswith(f"{name} ("))
        assert str(limits.STARTUP_TOTAL_CAP_BYTES) in notice


def run_render_subprocess(repo: Path, *extra: str, timeout: float = 20) -> subprocess.CompletedProcess[bytes]:
    env = subprocess_env(CONTINUITY_NO_CACHE="1")
    return subprocess.run(
        [sys.executable, str(startup_script()), "--render", "--format", "json", *extra],
        cwd=repo,
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


SIX_GIB = 6 * 1024**3
MAX_RSS_KIB = 512 * 1024  # far below 6 GiB: the process never holds a sparse file's bytes


@pytest.mark.parametrize(
    "rel",
    [
        SOURCE_REL["soul"],
        SOURCE_REL["device"],
        f"{HANDOFF_DIR}/29990101T000000Z-{DEVICE}-huge.md",
        "00-system/INDEX.md",
        "50-devices/dev-b/notes/huge.md",
    ],
)
def test_six_gib_sparse_source_is_not_read_whole(repo: Path, vault: Path, rel: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(SIX_GIB)
    assert path.stat().st_size == SIX_GIB
    connect(repo, vault)
    proc = run_render_subprocess(repo)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert usage.ru_maxrss < MAX_RSS_KIB, usage.ru_maxrss
    doc = json.loads(proc.stdout)
    sizes = {s["name"]: s for s in doc["sources"]}
    if rel in SOURCE_REL.values():
        name = next(n for n, r in SOURCE_REL.items() if r == rel)
        assert sizes[name]["reason"] == "too_large" and sizes[name]["bytes"] == SIX_GIB
        assert sizes[name]["sha256"] is None
        assert proc.returncode == 1
    elif rel.startswith(HANDOFF_DIR):
        assert sizes["handoff"]["reason"] is None  # an unreadable newer file is never "the" handoff
        assert sizes["handoff"]["path"] == DEFAULT_HANDOFF
    else:
        assert doc["status"] == "restored"


def test_fifo_in_another_devices_folder_does_not_hang(repo: Path, vault: Path) -> None:
    for rel in ("50-devices/dev-b/DEVICE.md", "50-devices/dev-b/notes/pipe.md", "50-devices/dev-c/DEVICE.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        if (vault / rel).exists():
            (vault / rel).unlink()
        os.mkfifo(vault / rel)
    connect(repo, vault)
    proc = run_render_subprocess(repo, timeout=20)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "restored"


@pytest.mark.parametrize(
    "rel",
    [
        SOURCE_REL["device"],
        SOURCE_REL["soul"],
        "00-system/MEMORY_POLICY.md",
        f"{HANDOFF_DIR}/29990101T000000Z-{DEVICE}-pipe.md",
    ],
)
def test_fifo_as_a_startup_file_is_refused_not_waited_on(repo: Path, vault: Path, rel: str) -> None:
    if (vault / rel).exists():
        (vault / rel).unlink()
    os.mkfifo(vault / rel)
    connect(repo, vault)
    proc = run_render_subprocess(repo, timeout=20)
    doc = json.loads(proc.stdout)
    by_name = {s["name"]: s for s in doc["sources"]}
    if rel in SOURCE_REL.values():
        name = next(n for n, r in SOURCE_REL.items() if r == rel)
        assert by_name[name]["reason"] == "invalid"
        assert doc["status"] == "partial"
    elif rel.startswith(HANDOFF_DIR):
        assert by_name["handoff"]["path"] == DEFAULT_HANDOFF
    else:
        assert doc["status"] == "restored"
        assert any("MEMORY_POLICY.md" in n for n in doc["notices"])


# ------------------------------------------------------------------------------- read-only loading


def test_loading_changes_nothing_in_the_vault(repo: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(vault, f"{HANDOFF_DIR}/2-secret.md", handoff_note("2030-01-01T00:00:00Z", hid="h-s", goal=aws_lines()))
    (vault / "00-system/link.md").symlink_to(vault / SOURCE_REL["soul"])
    os.mkfifo(vault / "50-devices/dev-b/pipe.md")
    os.utime(vault / SOURCE_REL["soul"], ns=(1, 1))  # an old atime must stay old, too: never written
    before = snapshot(vault)
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    for event in names.START_EVENTS:
        for harness in names.HARNESSES:
            for fmt in ("text", "json"):
                cli_render("--event", event, "--harness", harness, "--format", fmt)
                cli_render("--event", event, "--harness", harness, "--format", fmt)  # the warm path too
    monkeypatch.setenv("CONTINUITY_NO_CACHE", "1")
    cli_render()
    assert snapshot(vault) == before


# ---------------------------------------------------------------------------------- handoff choice


def handoff_in(brief: render.Brief) -> str | None:
    view = next(s for s in brief.sources if s.name == "handoff")
    return view.path if view.included else None


def test_handoff_chosen_by_created_not_mtime_not_name(vault: Path) -> None:
    for old in (vault / HANDOFF_DIR).glob("*.md"):
        old.unlink()
    write(vault, f"{HANDOFF_DIR}/a.md", handoff_note("2025-03-01T00:00:00Z", hid="h-newest"))
    write(vault, f"{HANDOFF_DIR}/z.md", handoff_note("2025-01-01T00:00:00Z", hid="h-oldest"))
    write(vault, f"{HANDOFF_DIR}/m.md", handoff_note("2025-02-01T00:00:00Z", hid="h-middle"))
    os.utime(vault / HANDOFF_DIR / "a.md", (1_000, 1_000))
    os.utime(vault / HANDOFF_DIR / "z.md", (2_000_000_000, 2_000_000_000))
    brief = cold_brief(vault)
    assert handoff_in(brief) == f"{HANDOFF_DIR}/a.md"
    assert "h-newest" in brief.text and "h-oldest" not in brief.text and "h-middle" not in brief.text


def test_handoff_created_compares_instants_quoted_or_not(vault: Path) -> None:
    for old in (vault / HANDOFF_DIR).glob("*.md"):
        old.unlink()
    # 10:00+02:00 is 08:00Z, earlier than 09:00Z even though it reads later.
    write(vault, f"{HANDOFF_DIR}/b.md", handoff_note("2025-01-01T10:00:00+02:00", hid="h-offset"))
    write(vault, f"{HANDOFF_DIR}/a.md", handoff_note("2025-01-01T09:00:00Z", hid="h-unquoted", quoted=False))
    assert handoff_in(cold_brief(vault)) == f"{HANDOFF_DIR}/a.md"


def test_handoff_tie_on_created_broken_by_file_name(vault: Path) -> None:
    for old in (vault / HANDOFF_DIR).glob("*.md"):
        old.unlink()
    write(vault, f"{HANDOFF_DIR}/b.md", handoff_note("2025-01-01T00:00:00Z", hid="h-b"))
    write(vault, f"{HANDOFF_DIR}/a.md", handoff_note("2025-01-01T00:00:00Z", hid="h-a"))
    assert handoff_in(cold_brief(vault)) == f"{HANDOFF_DIR}/b.md"


@pytest.mark.parametrize(
    "newer",
    [
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer", status="superseded"),
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer", status="historical"),
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer", project="other-app"),
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer").replace('type: "handoff"', 'type: "fact"'),
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer").replace("## ", "### "),  # no brief section
        handoff_note(None, hid="h-newer"),  # no created
        handoff_note("not a time", hid="h-newer"),
        handoff_note("2030-01-01T00:00:00Z", hid="H Newer"),  # invalid id
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer").replace("---\n# Handoff", "# Handoff", 1),
        "---\nid: h-newer\nid: h-newer\ntype: handoff\n---\n## Goal and status\nx\n",
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer") + "\udcff",
    ],
    ids=[
        "superseded",
        "historical",
        "other-project",
        "not-a-handoff",
        "no-sections",
        "no-created",
        "bad-created",
        "bad-id",
        "unclosed-frontmatter",
        "duplicate-key",
        "bad-utf8",
    ],
)
def test_superseded_other_project_and_broken_handoffs_are_never_chosen(vault: Path, newer: str) -> None:
    data = newer.encode("utf-8", "surrogateescape")
    write(vault, f"{HANDOFF_DIR}/99990101T000000Z-{DEVICE}-newer.md", data)
    brief = cold_brief(vault)
    assert handoff_in(brief) == DEFAULT_HANDOFF
    assert "h-newer" not in brief.text
    usable = any(word in data for word in (b"superseded", b"historical", b"other-app"))
    if not usable:
        # SPEC 5: a newer handoff file of the project that cannot be used is named; the brief is partial.
        assert brief.status == "partial"
        assert any(f"99990101T000000Z-{DEVICE}-newer.md" in notice for notice in brief.notices)
    else:
        assert brief.status == "restored"


@pytest.mark.parametrize("problem", ["secret", "too_large"])
def test_rejected_newest_handoff_yields_no_handoff_never_an_older_one(vault: Path, problem: str) -> None:
    goal = aws_lines() if problem == "secret" else printable_ascii(limits.HANDOFF_CAP_BYTES)
    write(
        vault,
        f"{HANDOFF_DIR}/99990101T000000Z-{DEVICE}-newer.md",
        handoff_note("2030-01-01T00:00:00Z", hid="h-newer", goal=goal),
    )
    brief = cold_brief(vault)
    view = next(s for s in brief.sources if s.name == "handoff")
    assert (view.included, view.reason) == (False, problem)
    assert view.path == f"{HANDOFF_DIR}/99990101T000000Z-{DEVICE}-newer.md"
    data = (vault / view.path).read_bytes()
    assert view.size == len(data)
    # Read whole (under 1 MiB): its digest is shown, unless it holds a secret, which a digest would let
    # anyone test guesses against.
    assert view.sha256 == (None if problem == "secret" else hashlib.sha256(data).hexdigest())
    assert MARK["handoff"] not in brief.text and "h-start" not in brief.text
    assert brief.status == "partial"
    notice = next(n for n in brief.notices if n.startswith("handoff"))
    assert "older" in notice
    if problem == "secret":
        assert "line " in notice and "aws" in notice
        for secret in SECRET_VALUES:
            assert secret not in brief.text


def test_missing_handoff_is_fine(vault: Path) -> None:
    for old in (vault / HANDOFF_DIR).glob("*.md"):
        old.unlink()
    brief = cold_brief(vault)
    assert brief.status == "restored"
    view = next(s for s in brief.sources if s.name == "handoff")
    assert (view.path, view.size, view.sha256, view.reason) == (None, None, None, "missing")


# ------------------------------------------------------------------------------------- secrets


def test_secret_notice_names_line_and_detector_never_value(vault: Path) -> None:
    write(vault, SOURCE_REL["project"], hot_note("project", f"- {MARK['project']}\n\n{aws_lines()}"))
    brief = cold_brief(vault)
    assert reasons(brief)["project"] == "secret"
    notice = next(n for n in brief.notices if n.startswith("project"))
    # line numbers count from the first line of the file, frontmatter included
    lines = (vault / SOURCE_REL["project"]).read_text().split("\n")
    key_line = next(i for i, line in enumerate(lines, 1) if line.startswith("aws_access_key_id"))
    assert f"line {key_line}" in notice
    assert "aws" in notice
    dump = json.dumps(brief.to_json())
    for secret in SECRET_VALUES:
        assert secret not in dump


def test_allowlist_pragma_keeps_a_source(vault: Path) -> None:
    ident, secret = aws_lines().split("\n")
    text = f"- {MARK['soul']}\n{ident}  # pragma: allowlist secret\n{secret}  # pragma: allowlist secret"
    write(vault, SOURCE_REL["soul"], hot_note("soul", text))
    assert reasons(cold_brief(vault))["soul"] is None


@pytest.mark.parametrize("name", ["index", "policy"])
def test_index_and_policy_are_checked_but_never_rendered(vault: Path, name: str) -> None:
    rel = "00-system/INDEX.md" if name == "index" else "00-system/MEMORY_POLICY.md"
    write(vault, rel, f"# x\n\n{INDEX_MARK}\n{aws_lines()}\n")
    brief = cold_brief(vault)
    assert brief.status == "restored"  # a failure there adds a notice but does not change the status
    assert any(rel in n for n in brief.notices)
    assert INDEX_MARK not in brief.text
    for secret in SECRET_VALUES:
        assert secret not in brief.text
    write(vault, rel, "x" * (limits.LIFECYCLE_TEXT_CAP_BYTES + 1))
    brief = cold_brief(vault)
    assert brief.status == "restored" and any(rel in n for n in brief.notices)


# ------------------------------------------------------------------------------------ notes


def test_bom_and_crlf_are_accepted(vault: Path) -> None:
    text = hot_note("soul", f"- {MARK['soul']} one\n- two")
    write(vault, SOURCE_REL["soul"], b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    brief = cold_brief(vault)
    assert reasons(brief)["soul"] is None
    assert f"- {MARK['soul']} one\n- two\n</source>" in brief.text
    assert "\r" not in brief.text and "\ufeff" not in brief.text


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"---\ntype: soul\ntype: soul\n---\n## Brief\nx\n", "duplicate"),
        (b"---\ntype: &a soul\nother: *a\n---\n## Brief\nx\n", "anchor"),
        (b"---\ntype: soul\nx: &anchor 1\n---\n## Brief\nx\n", "anchor"),
        (b"---\n- soul\n---\n## Brief\nx\n", "mapping"),
        (b"---\njust text\n---\n## Brief\nx\n", "mapping"),
        (b"---\ntype: soul\n---\n## Brief\n\xc3\x28 broken\n", "UTF-8"),
        (b"---\ntype: soul\n## Brief\nx\n", "closing"),
        (b"## Brief\nno frontmatter\n", "frontmatter"),
        (b"---\ntype: [soul\n---\n", "frontmatter"),
    ],
    ids=["duplicate", "alias", "anchor", "list", "scalar", "utf8", "unclosed", "none", "syntax"],
)
def test_broken_frontmatter_is_rejected_and_named(vault: Path, content: bytes, words: str) -> None:
    write(vault, SOURCE_REL["soul"], content)
    brief = cold_brief(vault)
    assert reasons(brief)["soul"] == "invalid"
    notice = next(n for n in brief.notices if n.startswith("soul"))
    assert SOURCE_REL["soul"] in notice
    assert words.casefold() in notice.casefold()
    assert brief.status == "partial"


def test_invalid_utf8_notice_names_the_line(vault: Path) -> None:
    write(vault, SOURCE_REL["soul"], b"---\ntype: soul\n---\n\n## Brief\n\nok\n\xff\n")
    notice = next(n for n in cold_brief(vault).notices if n.startswith("soul"))
    assert "line 8" in notice


@pytest.mark.parametrize("name", ["project", "device"])
def test_label_mismatch(vault: Path, name: str) -> None:
    write(vault, SOURCE_REL[name], hot_note(name, meta={name: "someone-else"}))
    brief = cold_brief(vault)
    assert reasons(brief)[name] == "label_mismatch"
    assert "someone-else" in next(n for n in brief.notices if n.startswith(name))


def test_project_label_must_match_connection_too(vault: Path) -> None:
    """PROJECT.md in the connection's project folder but naming another project is refused."""
    brief = render.render(SESSION, "codex", *sources.validate(sources.gather(vault, PROJECT, DEVICE, SESSION)))
    assert reasons(brief)["project"] is None
    write(vault, SOURCE_REL["project"], hot_note("project", meta={"project": 7}))
    assert reasons(cold_brief(vault))["project"] == "label_mismatch"


@pytest.mark.parametrize("name", ["soul", "preferences", "project", "device"])
def test_a_link_as_a_hot_source_is_reason_link(vault: Path, name: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(hot_note(name))
    (vault / SOURCE_REL[name]).unlink()
    (vault / SOURCE_REL[name]).symlink_to(outside)
    brief = cold_brief(vault)
    assert reasons(brief)[name] == "link"
    assert MARK[name] not in brief.text
    view = next(s for s in brief.sources if s.name == name)
    assert view.path == SOURCE_REL[name] and view.sha256 is None


@pytest.mark.parametrize("folder", ["00-system", f"10-project/{PROJECT}", f"50-devices/{DEVICE}", "50-devices"])
def test_a_linked_folder_on_the_path_is_reason_link(vault: Path, folder: str, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    (vault / folder).rename(moved)
    (vault / folder).symlink_to(moved, target_is_directory=True)
    brief = cold_brief(vault)
    affected = [n for n, rel in SOURCE_REL.items() if rel.startswith(folder + "/")]
    for name in affected:
        assert reasons(brief)[name] == "link", name
        assert MARK[name] not in brief.text


def test_a_linked_handoff_is_never_chosen(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "h.md"
    outside.write_text(handoff_note("2099-01-01T00:00:00Z", hid="h-linked"))
    (vault / HANDOFF_DIR / "99990101T000000Z-x.md").symlink_to(outside)
    brief = cold_brief(vault)
    assert handoff_in(brief) == DEFAULT_HANDOFF and "h-linked" not in brief.text


# ------------------------------------------------------------------------------------- ceilings


def ceiling_left(brief: render.Brief) -> list[str]:
    return [s.name for s in brief.sources if s.reason == "ceiling"]


@pytest.mark.parametrize(
    ("big", "event", "expected"),
    [
        ("device", SESSION, ["device"]),
        ("preferences", SESSION, ["device", "preferences"]),
        ("handoff", SESSION, ["device", "preferences", "handoff"]),
        ("project", SESSION, ["device", "preferences", "handoff", "project"]),
        ("soul", SESSION, ["device", "preferences", "handoff", "project", "soul"]),
        ("device", SUBAGENT, ["device"]),
        ("handoff", SUBAGENT, ["device", "handoff"]),
        ("project", SUBAGENT, ["device", "handoff", "project"]),
    ],
)
def test_ceiling_leave_out_order(vault: Path, big: str, event: str, expected: list[str]) -> None:
    ceiling = render.CEILING_BYTES[event]
    filler = printable_ascii(ceiling - 256) if big != "soul" else printable_ascii(ceiling + 256)
    if big == "handoff":
        write(vault, DEFAULT_HANDOFF, handoff_note(goal=filler))
    else:
        write(vault, SOURCE_REL[big], hot_note(big, filler))
    brief = cold_brief(vault, event)
    left = ceiling_left(brief)
    assert sorted(left, key=LEFT_OUT[event].index) == expected
    assert brief.status == "partial"
    assert brief.bytes <= ceiling
    for name in expected:
        assert MARK[name] not in brief.text
        assert any(n.startswith(f"{name} (") and str(ceiling) in n for n in brief.notices), name
    for name in set(SHOWN[event]) - set(expected):
        assert MARK[name] in brief.text
    assert_wrapper(brief.text, len(included(brief)))


def test_ceiling_is_exact_bytes_not_characters(vault: Path) -> None:
    # Three-byte characters: 4,000 of them are 12,000 bytes, over SubagentStart's 8 KiB but few chars.
    write(vault, SOURCE_REL["project"], hot_note("project", "\u6f22" * (limits.SUBAGENT_START_CEILING_BYTES // 3)))
    brief = cold_brief(vault, SUBAGENT)
    assert "project" in ceiling_left(brief)
    assert brief.bytes <= limits.SUBAGENT_START_CEILING_BYTES
    assert cold_brief(vault, SESSION).status == "restored"


def test_claude_also_stays_within_its_character_limit(vault: Path) -> None:
    # ASCII over 10,000 characters but under 12 KiB: fine for Codex, too long for Claude Code.
    write(vault, SOURCE_REL["soul"], hot_note("soul", printable_ascii(limits.CLAUDE_CONTEXT_LIMIT_CHARS + 200)))
    codex = cold_brief(vault, SESSION, "codex")
    assert codex.status == "restored" and codex.bytes <= limits.SESSION_START_CEILING_BYTES
    assert codex.chars > limits.CLAUDE_CONTEXT_LIMIT_CHARS
    claude = cold_brief(vault, SESSION, "claude")
    assert claude.chars <= limits.CLAUDE_CONTEXT_LIMIT_CHARS
    assert claude.status == "partial"
    assert set(ceiling_left(claude)) == set(LEFT_OUT[SESSION])  # the soul alone is too long
    assert any(str(limits.CLAUDE_CONTEXT_LIMIT_CHARS) in n for n in claude.notices)


def test_claude_character_limit_leaves_out_in_order(vault: Path) -> None:
    big = limits.CLAUDE_CONTEXT_LIMIT_CHARS - 500
    write(vault, DEFAULT_HANDOFF, handoff_note(goal=printable_ascii(big)))
    codex = cold_brief(vault, SESSION, "codex")
    claude = cold_brief(vault, SESSION, "claude")
    assert codex.status == "restored" and codex.chars > limits.CLAUDE_CONTEXT_LIMIT_CHARS
    assert claude.chars <= limits.CLAUDE_CONTEXT_LIMIT_CHARS
    assert sorted(ceiling_left(claude), key=LEFT_OUT[SESSION].index) == [
        "device",
        "preferences",
        "handoff",
    ]


# --------------------------------------------------------------------------------- figures, JSON


def test_json_keys_are_pinned(vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    for event in names.START_EVENTS:
        code, doc = render_json("--event", event)
        assert code == 0
        assert set(doc) == TOP_KEYS
        assert doc["version"] == 1 and doc["event"] == event and doc["status"] == "restored"
        assert doc["ceiling_bytes"] == render.CEILING_BYTES[event]
        assert [s["name"] for s in doc["sources"]] == list(SHOWN[event])
        for source in doc["sources"]:
            assert set(source) == SOURCE_KEYS
            assert source["included"] is True and source["reason"] is None
            data = (vault / source["path"]).read_bytes()
            assert source["bytes"] == len(data)
            assert source["sha256"] == hashlib.sha256(data).hexdigest()
        assert isinstance(doc["notices"], list)


def test_json_missing_source_has_null_path_and_digest(vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (vault / SOURCE_REL["preferences"]).unlink()
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    code, doc = render_json()
    assert code == 1
    prefs = next(s for s in doc["sources"] if s["name"] == "preferences")
    assert prefs == {
        "name": "preferences",
        "path": None,
        "bytes": None,
        "sha256": None,
        "included": False,
        "reason": "missing",
    }
    assert doc["status"] == "partial"
    assert all(s["reason"] in (None, *render.REASONS) for s in doc["sources"])


def test_figures_bytes_chars_tokens(vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An emoji is 4 UTF-8 bytes, 2 UTF-16 units and 1 code point: all three counts differ.
    write(vault, SOURCE_REL["soul"], hot_note("soul", f"- {MARK['soul']} \U0001f600\U0001f680 caf\u00e9"))
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    _, doc = render_json()
    brief = doc["brief"]
    assert isinstance(brief, str) and "\U0001f600" in brief
    assert doc["bytes"] == len(brief.encode("utf-8"))
    assert doc["chars"] == len(brief.encode("utf-16-le")) // 2
    assert doc["chars"] == len(brief) + 2  # two astral characters, two surrogate pairs
    assert doc["tokens_estimate"] == math.ceil(doc["bytes"] / limits.BYTES_PER_TOKEN)
    _, out, _ = cli_render()
    assert out == brief + "\n"


def test_brief_is_deterministic(vault: Path, tmp_path: Path) -> None:
    first = {(e, h): cold_brief(vault, e, h).text for e in names.START_EVENTS for h in names.HARNESSES}
    copy = tmp_path / "copy"
    make_vault(copy)  # another vault with the same content, written at another time
    second = {(e, h): cold_brief(copy, e, h).text for e in names.START_EVENTS for h in names.HARNESSES}
    assert first == second
    assert first == {(e, h): cold_brief(vault, e, h).text for e in names.START_EVENTS for h in names.HARNESSES}


# ---------------------------------------------------------------------------------- render command


def test_render_exit_codes(vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    code, out, err = cli_render()
    assert (code, err) == (0, "") and 'status="restored"' in out
    (vault / SOURCE_REL["soul"]).unlink()
    code, out, _ = cli_render()
    assert code == 1 and 'status="partial"' in out
    code, out, _ = cli_render("--event", "SubagentStart")
    assert code == 0 and 'status="restored"' in out
    vault.rename(vault.with_name("gone"))
    code, out, _ = cli_render()
    assert code == 3 and 'status="unavailable"' in out


def test_render_unconnected_checkout_prints_unavailable(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_connection(monkeypatch, repo)
    code, out, err = cli_render()
    assert code == 3
    assert out.startswith('<private-memory event="SessionStart" status="unavailable">')
    assert "Private memory was not restored" in out
    assert "Traceback" not in err


def test_unreachable_vault_is_unavailable_without_private_content(
    vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    assert cli_render()[0] == 0  # warm the cache first: it must not outlive the vault
    vault.rename(vault.with_name("unmounted"))
    for event in names.START_EVENTS:
        code, doc = render_json("--event", event)
        assert code == 3
        assert doc["status"] == "unavailable"
        assert "Private memory was not restored" in doc["brief"]
        for marker in MARK.values():
            assert marker not in doc["brief"]
        assert "<source" not in doc["brief"]
        assert_wrapper(doc["brief"], 0)


def test_vault_path_that_is_a_file_is_unavailable(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "not-a-folder"
    file.write_text("x")
    connect(repo, file)
    use_connection(monkeypatch, repo)
    assert cli_render()[0] == 3


@pytest.mark.parametrize("event", names.START_EVENTS)
@pytest.mark.parametrize("harness", names.HARNESSES)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lifecycle_render_and_script_render_print_the_same(
    vault: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, event: str, harness: str, fmt: str
) -> None:
    (vault / SOURCE_REL["device"]).unlink()  # partial: exit 1 on both
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    args = ["--event", event, "--format", fmt, "--harness", harness]
    code, out, _ = cli_render(*args)
    proc = subprocess.run(
        [sys.executable, str(startup_script()), "--render", *args],
        cwd=repo,
        capture_output=True,
        check=False,
        env=subprocess_env(),
    )
    assert proc.stdout.decode("utf-8") == out
    assert proc.returncode == code == 1
    assert proc.stderr == b""


def test_render_rejects_unknown_options(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_connection(monkeypatch, repo)
    code, _, err = cli_render("--event", "Stop")
    assert code == 2 and err.startswith("lifecycle: error:")
    proc = subprocess.run(
        [sys.executable, str(startup_script()), "--render", "--event", "Stop"],
        cwd=repo,
        capture_output=True,
        check=False,
        env=subprocess_env(),
    )
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


# ------------------------------------------------------------------------------- discovery


def test_subdirectory_and_second_worktree_get_the_same_brief(
    vault: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    connect(repo, vault)
    use_connection(monkeypatch, repo)
    expected = cli_render("--format", "json")[1]
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert cli_render("--format", "json")[1] == expected
    tree = tmp_path / "second-tree"
    git(repo, "worktree", "add", "-q", str(tree))
    monkeypatch.chdir(tree)
    assert cli_render("--format", "json")[1] == expected
    assert not (tree / ".agent-vault").exists()  # reused, not copied


def test_disagreeing_sibling_connections_give_unavailable_that_says_so(
    vault: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_vault(tmp_path / "other-vault")
    one, two = tmp_path / "tree-one", tmp_path / "tree-two"
    git(repo, "worktree", "add", "-q", str(one))
    git(repo, "worktree", "add", "-q", str(two))
    connect(one, vault)
    connect(two, other)
    use_connection(monkeypatch, repo)
    code, doc = render_json()
    assert code == 3 and doc["status"] == "unavailable"
    assert "disagree" in doc["brief"]
    for marker in MARK.values():
        assert marker not in doc["brief"]
    # agreeing siblings are reused
    connect(two, vault)
    code, doc = render_json()
    assert code == 0 and doc["status"] == "restored"


def test_environment_override_names_the_connection(vault: Path, tmp_path: Path, repo: Path) -> None:
    file = connection_file(tmp_path / "conn", vault)
    brief = build.build(repo, SESSION, "codex", {"AGENT_VAULT_CONNECTION": str(file)})
    assert brief is not None and brief.status == "restored"
    assert build.build(repo, SESSION, "codex", {}) is None
