"""`lifecycle review` driven as a person drives it: a real pseudo-terminal, one key at a time.

Two computers (two homes) share a private Git vault through a bare remote; between them they leave
everything the inbox gathers: two current handoffs, a note the gate holds back, a sync-conflict copy, an
approved note past its date and two candidates. `pty.fork` gives the command a controlling terminal, so
its keys are read without Enter and Ctrl-C reaches it as it reaches a person's command.
"""

from __future__ import annotations

import json
import os
import pty
import select
import sys
from pathlib import Path

from hookkit import LIFECYCLE, hook_env
from test_first_hour import HANDOFF, Computer, _approved, _edit_brief, pair  # noqa: F401 (the fixture)

# How long the test waits for the command to say something before it gives up (a hung command, not
# a speed check: nothing is asserted about how long anything takes).
PATIENCE_SECONDS = 60.0


class Terminal:
    """One command on a pseudo-terminal: `expect` text, `send` keys, then its exit status."""

    def __init__(self, computer: Computer, *args: str, env: dict[str, str] | None = None) -> None:
        environment = hook_env(**computer.env, **(env or {}))
        environment["TERM"] = "dumb"
        pid, fd = pty.fork()
        if pid == 0:  # the child: the command, with the terminal as its controlling terminal
            os.chdir(computer.clone)
            os.execve(str(LIFECYCLE), [str(LIFECYCLE), *args], environment)  # noqa: S606 (an argument list)
        self.pid, self.fd, self.seen = pid, fd, ""

    def expect(self, text: str) -> str:
        """Read until `text` has appeared; what was read up to and including it."""
        while text not in self.seen:
            ready, _, _ = select.select([self.fd], [], [], PATIENCE_SECONDS)
            assert ready, f"waited in vain for {text!r}; the terminal shows:\n{self.seen}"
            try:
                chunk = os.read(self.fd, 4096).decode("utf-8", "replace")
            except OSError:
                chunk = ""
            assert chunk, f"the command ended before {text!r}; the terminal shows:\n{self.seen}"
            self.seen += chunk
        head, _, self.seen = self.seen.partition(text)
        return head + text

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode("utf-8"))

    def finish(self) -> tuple[int, str]:
        """The exit status and whatever the command printed after the last `expect`."""
        rest = self.seen
        while True:
            try:
                chunk = os.read(self.fd, 4096).decode("utf-8", "replace")
            except OSError:
                break
            if not chunk:
                break
            rest += chunk
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status), rest


def _fixer(tmp_path: Path) -> str:
    """An $EDITOR that repairs a broken title and merges by keeping both sides' lines."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        "path = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        "text = text.replace('title: [unclosed', 'title: fixed')\n"
        "lines = [line for line in text.splitlines() if not line.startswith('=== lifecycle review:')]\n"
        "open(path, 'w', encoding='utf-8').write('\\n'.join(lines) + '\\n')\n"
    )
    return f"{sys.executable} {script}"


def test_the_inbox_one_key_at_a_time(pair: tuple[Path, Computer, Computer], tmp_path: Path) -> None:  # noqa: F811
    remote, a, b = pair
    # Two current handoffs, one from each computer.
    a.ok("handoff", "new", "--title", "From A", "--from", "-", stdin=HANDOFF)
    b.ok("handoff", "new", "--title", "From B", "--from", "-", stdin=HANDOFF.replace("reader half", "reader part"))
    b.ok("sync")
    # A sync-conflict copy on A: both computers changed the preferences.
    _edit_brief(b, "00-system/PREFERENCES.md", "- Answer in British English.")
    b.ok("sync")
    _edit_brief(a, "00-system/PREFERENCES.md", "- Answer in American English.")
    a.ok("sync")
    # An approved note past its date, two candidates, and a candidate the gate holds back.
    old = _approved(a, "Build tool", "The build uses make.")
    note = a.vault / "30-memory" / "facts" / f"{old}.md"
    note.write_text(note.read_text().replace("revalidate_by: ", "revalidate_by: 2001-01-01\nold_due: ", 1))
    keep = json.loads(
        a.ok(
            "note",
            "new",
            "--type",
            "fact",
            "--title",
            "Tests need Docker",
            "--from",
            "-",
            "--evidence",
            "ran them",
            "--json",
            stdin="The suite starts Postgres in Docker.",
        ).stdout
    )
    drop = json.loads(
        a.ok(
            "note",
            "new",
            "--type",
            "lesson",
            "--title",
            "Never deploy on Friday",
            "--from",
            "-",
            "--evidence",
            "a hunch",
            "--json",
            stdin="No deploys on Fridays.",
        ).stdout
    )
    broken = a.vault / "20-state" / "candidates" / "cand-fact-broken.md"
    broken.write_text("---\nid: cand-fact-broken\ntype: fact\nstatus: candidate\ntitle: [unclosed\n---\nA claim.\n")
    listed = json.loads(a.ok("review", "--json").stdout)["items"]
    assert [item["kind"] for item in listed] == ["handoffs", "held", "conflict", "due", "candidate", "candidate"]
    assert "lifecycle review" in a.doctor()["review"][0]

    term = Terminal(a, "review", env={"EDITOR": _fixer(tmp_path)})
    term.expect("(1/6) handoffs")
    term.expect("=keep that one, n=later, q=stop [")
    term.send("?")  # the help, then the same question again
    term.expect("keep that handoff current")
    term.expect("? ")
    term.send("1")
    term.expect("the other(s) are superseded by it")
    term.expect("(2/6) held")
    term.send("e")  # the editor repairs the frontmatter; the gate lets it in
    term.expect("saved")
    term.expect("(3/6) conflict")
    term.send("t")  # keep this computer's side
    term.expect("the other side is archived as 90-archive/00-system/PREFERENCES.md")
    term.expect("(4/6) due")
    term.send("v")
    term.expect("verified; due again")
    term.expect("(5/6) candidate: Tests need Docker")
    term.expect("| The suite starts Postgres in Docker.")
    term.send("a")
    term.expect("approved as")
    term.expect("(6/6) candidate: Never deploy on Friday")
    term.send("r")
    term.expect("rejected: 90-archive/20-state/candidates/")
    code, rest = term.finish()
    assert code == 0, rest

    prefs = (a.vault / "00-system" / "PREFERENCES.md").read_text()
    assert "American" in prefs and "British" not in prefs
    archived = (a.vault / "90-archive" / "00-system" / "PREFERENCES.md").read_text()
    assert "British" in archived and "archived_reason" in archived  # the unkept side, with the reason
    assert not [p for p in (a.vault / "00-system").iterdir() if ".sync-conflict-" in p.name]
    assert "title: fixed" in broken.read_text()
    rejected = (a.vault / "90-archive" / "20-state" / "candidates" / f"{drop['id']}.md").read_text()
    assert "archived_reason: rejected at review" in rejected
    assert not (a.vault / "20-state" / "candidates" / f"{keep['id']}.md").exists()
    left = [item["kind"] for item in json.loads(a.ok("review", "--json").stdout)["items"]]
    assert left == ["candidate"]  # the repaired one, now a plain candidate waiting for its turn
    assert a.doctor()["handoffs"][0].startswith("ok: one current handoff")
    a.ok("sync")
    assert "Answer in American English." in remote_text(remote, "00-system/PREFERENCES.md")


def remote_text(remote: Path, rel: str) -> str:
    from conftest import git

    return git(remote, "show", f"main:{rel}")


def test_q_and_ctrl_c_stop_without_losing_anything(pair: tuple[Path, Computer, Computer]) -> None:  # noqa: F811
    _remote, a, _b = pair
    for title in ("First claim", "Second claim"):
        a.ok("note", "new", "--type", "fact", "--title", title, "--from", "-", "--evidence", "e", stdin="Body.")
    term = Terminal(a, "review")
    term.expect("(1/2) candidate: First claim")
    term.send("q")
    code, _rest = term.finish()
    assert code == 0
    term = Terminal(a, "review")
    term.expect("(1/2) candidate: First claim")
    term.expect("? ")
    term.send("\x03")  # Ctrl-C, as the terminal delivers it: SIGINT to the command
    code, rest = term.finish()
    assert code == 130 and "stopped: nothing was lost; 2 item(s) still wait" in rest
    assert "Traceback" not in rest
    assert len(json.loads(a.ok("review", "--json").stdout)["items"]) == 2


def test_edit_quotes_the_profiles_own_cap_for_a_soul_too_large_to_open(tmp_path: Path) -> None:
    from test_first_hour import _one_computer

    from continuity import limits

    a = _one_computer(tmp_path)
    soul = a.vault / "00-system" / "SOUL.md"
    soul.write_text(soul.read_text() + "- a line of persona text\n" * 50_000)  # over a MiB
    assert f"over its cap of {limits.SOUL_CAP_BYTES}" in a.run("render").stdout
    term = Terminal(a, "edit", "soul", "--accept-concurrency-risk", env={"EDITOR": "true"})
    code, shown = term.finish()
    assert code == 5, shown
    assert f"its cap is {limits.SOUL_CAP_BYTES} bytes" in shown and str(limits.LIFECYCLE_TEXT_CAP_BYTES) not in shown
