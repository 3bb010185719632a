"""Warm recall and journal search on generated vaults and journals.

Run from the repository root:

    python bench/bench_recall.py [--sizes 1000,10000] [--repeat 7] [--cold-repeat 3] [--journal-lines 1000000]

For each vault size (approved notes spread over `30-memory/` and this device's notes folder, each a
short claim of 60 to 200 words with a title, tags and dates; the words are drawn from a Zipf
distribution over 5,000 made-up words, as natural prose is, so a query word matches a realistic share
of the notes), reported as medians:

* `cold build`: `recall.recall` in process with no index file (walk, read, parse, secret gate,
  tokenize, insert, then the query), and the same per note: it should stay flat as the vault grows,
  which is what "the cold build grows linearly" means;
* `warm query`: `recall.recall` in process with an index that is current (walk and stat, the FTS5
  query, a digest of each returned note, rendering), over a rotation of queries;
* `one edit`: a warm query right after one note changed (it is read and indexed again);
* `command`: the whole `lifecycle recall …` command as a new process, warm, next to the bare
  interpreter (`python -I -S -c pass`) measured in the same run;
* `imports`: a process that only imports the modules the warm command imported (read from its
  `-X importtime` report) and leaves as it does: the command's fixed cost before any work.

Then the frontmatter of 1,000 generated notes is read both ways, per note: `flatyaml` (what the cold
build uses for flat frontmatter) and ruamel.yaml composing once (the fallback for everything else).

Then one journal of `--journal-lines` lines (about 240 bytes each) is searched with `journal_search`:
the newest entries without a query (the default 50,000-line window), a literal that only the oldest
line holds (the window widens fourfold up to 1,000,000 lines), a literal that no line holds, and a
regular expression that no line matches (every line in the window is parsed).

Nothing here asserts a time: benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from continuity.local.connection import render_connection  # noqa: E402
from continuity.recall import index as recall_index, journal_search, search as recall  # noqa: E402
from continuity.vault import notes  # noqa: E402

DEVICE = "bench-box"
PROJECT = "bench-app"
SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "sa", "vor", "ne", "qui", "del", "ax", "om", "pre", "lin", "dus", "ge")


def pseudo_word(rank: int) -> str:
    """A distinct made-up word per rank, so term frequencies follow the Zipf curve below exactly."""
    out = ""
    rank += 1
    while rank:
        rank, digit = divmod(rank, len(SYLLABLES))
        out += SYLLABLES[digit]
    return out


# Prose follows a Zipf law over 5,000 words, as natural text does: a query word of middling rank
# occurs in a few percent of the notes, not in all of them.
VOCABULARY = [pseudo_word(rank) for rank in range(5000)]
WEIGHTS = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
IDENTIFIERS = ("cache_dir", "RecallIndex", "write-path", "continuity.recall", "getHTTPResponse", "XDG_CACHE_HOME")
QUERIES = (
    [VOCABULARY[40], VOCABULARY[400]],
    [VOCABULARY[150]],
    [f'"{VOCABULARY[3]} {VOCABULARY[7]}"'],
    ["RecallIndex"],
    ["cache_dir", VOCABULARY[900]],
    [VOCABULARY[60], VOCABULARY[70], VOCABULARY[2000]],
    ["nothing-matches-this"],
)
FOLDERS = ("30-memory/facts", "30-memory/decisions", "30-memory/lessons", f"50-devices/{DEVICE}/notes")


def median_seconds(action: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def note_text(rng: random.Random, n: int) -> str:
    words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(60, 200))
    if n % 7 == 0:
        words.insert(rng.randrange(len(words)), rng.choice(IDENTIFIERS))
    title = " ".join(rng.choices(VOCABULARY, WEIGHTS, k=5))
    tags = ", ".join(sorted(set(rng.choices(VOCABULARY[20:500], k=3))))
    day = 1 + n % 28
    return (
        f"---\nid: note-{n:06d}\ntype: fact\nstatus: approved\ntitle: {title}\ntags: [{tags}]\n"
        f"scope: global\ncreated: 2025-03-{day:02d}T10:00:00Z\nverified: 2025-03-{day:02d}\n"
        f"revalidate_by: 2099-01-01\n---\n# {title}\n\n" + " ".join(words) + ".\n"
    )


def make_vault(root: Path, total: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for n in range(total):
        folder = FOLDERS[n % len(FOLDERS)] if n % 10 == 0 else FOLDERS[n % 3]
        (root / folder / f"note-{n:06d}.md").write_text(note_text(rng, n), encoding="utf-8")


def run_query(vault: Path, terms: list[str]) -> recall.Recall:
    return recall.recall(vault, DEVICE, PROJECT, terms)


def bench_vault(total: int, repeat: int, cold_repeat: int, work: Path) -> dict[str, float]:
    vault = work / f"vault-{total}"
    make_vault(vault, total)
    index_file = recall_index.index_file(vault)

    def cold() -> None:
        if index_file.exists():
            index_file.unlink()
        run_query(vault, QUERIES[0])

    cold_time = median_seconds(cold, cold_repeat, warmup=0)
    rotation = iter(range(10**9))

    def warm() -> None:
        run_query(vault, QUERIES[next(rotation) % len(QUERIES)])

    warm_time = median_seconds(warm, repeat * len(QUERIES))
    edit_target = vault / FOLDERS[0] / "note-000000.md"
    counter = iter(range(10**9))

    def one_edit() -> None:
        text = edit_target.read_text(encoding="utf-8")
        edit_target.write_text(text + f"edit {next(counter)}\n", encoding="utf-8")
        run_query(vault, QUERIES[0])

    edit_time = median_seconds(one_edit, repeat)
    connection_file = work / f"connection-{total}"
    connection_file.write_text(render_connection(vault, DEVICE, PROJECT, None), encoding="utf-8")
    # A command run by a person has its bytecode cached: let the warm-up write it, as any first run does.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["AGENT_VAULT_CONNECTION"] = str(connection_file)
    command = [sys.executable, "-c", "from continuity.cli import main; main()", "recall", *QUERIES[0]]

    def whole_command() -> None:
        subprocess.run(command, env=env, check=True, capture_output=True)

    command_time = median_seconds(whole_command, repeat)
    probe = subprocess.run([command[0], "-X", "importtime", *command[1:]], env=env, check=True, capture_output=True)
    lines = probe.stderr.decode("utf-8", "replace").splitlines()
    names = [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")]
    modules = [name for name in names if name.isidentifier() or name.replace(".", "_").isidentifier()]
    # The report also names the imports that were tried and failed (as `sitecustomize` is): try them too.
    loop = "for name in {!r}:\n    try:\n        importlib.import_module(name)\n    except ImportError:\n        pass\n"
    only_imports = [sys.executable, "-c", "import importlib, os\n" + loop.format(modules) + "os._exit(0)"]
    imports_time = median_seconds(lambda: subprocess.run(only_imports, env=env, check=True), repeat)
    bare_time = median_seconds(lambda: subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True), repeat)
    size = index_file.stat().st_size
    return {
        "notes": total,
        "cold_build_s": cold_time,
        "cold_per_note_ms": cold_time / total * 1000,
        "warm_query_ms": warm_time * 1000,
        "one_edit_ms": edit_time * 1000,
        "command_ms": command_time * 1000,
        "imports_ms": imports_time * 1000,
        "bare_python_ms": bare_time * 1000,
        "index_mib": size / 2**20,
    }


def bench_frontmatter(count: int, repeat: int) -> tuple[float, float]:
    """(flat, ruamel.yaml) median microseconds to read one note's frontmatter."""
    rng = random.Random(2)
    blocks = []
    for n in range(count):
        text = note_text(rng, n)
        front, _body, _start = notes.split_frontmatter(text, "n.md")
        assert front is not None
        blocks.append(front)
    flat = median_seconds(lambda: [notes.parse_frontmatter(b, "n.md") for b in blocks], repeat)
    full = median_seconds(lambda: [notes._load_yaml(b, "n.md") for b in blocks], max(3, repeat // 2))
    return flat / count * 1e6, full / count * 1e6


def make_journal(root: Path, lines: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    file = root / "50-devices" / DEVICE / "journal.jsonl"
    file.parent.mkdir(parents=True, exist_ok=True)
    ops = ("note.new", "note.approve", "handoff.new", "lease.acquire", "lease.release", "note.supersede")
    with open(file, "w", encoding="utf-8") as handle:
        for n in range(lines):
            seconds = n
            ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + seconds))
            ident = f"oldest-marker-{n}" if n == 0 else f"note-{rng.randrange(10**6):06d}"
            doc = {
                "ts": ts,
                "device": DEVICE,
                "op": rng.choice(ops),
                "id": ident,
                "path": f"30-memory/facts/{ident}.md",
                "sha256": f"{rng.getrandbits(256):064x}",
            }
            handle.write(json.dumps(doc, separators=(",", ":")) + "\n")
    return root


def bench_journal(lines: int, repeat: int, work: Path) -> list[tuple[str, float, int, int]]:
    root = make_journal(work / "journal-vault", lines)
    out = []
    cases = (
        ("newest 20, no query", None),
        ("literal held by the oldest line", "oldest-marker-0"),
        ("literal held by no line", "no-such-thing"),
        ("regex matching no line", "/^zz+$/"),
    )
    for label, query in cases:
        found = journal_search.search(root, query)
        seconds = median_seconds(lambda q=query: journal_search.search(root, q), repeat)  # type: ignore[misc]
        out.append((label, seconds, found.used_window_lines, len(found.results)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--cold-repeat", type=int, default=3)
    parser.add_argument("--journal-lines", type=int, default=1_000_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-recall-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus; medians")
    try:
        rows = [bench_vault(int(size), args.repeat, args.cold_repeat, work) for size in args.sizes.split(",")]
        header = ("notes", "cold build s", "per note ms", "warm query ms", "one edit ms", "command ms", "imports ms")
        print(" | ".join(header) + " | bare py ms | index MiB")
        for row in rows:
            print(
                f"{row['notes']:>5} | {row['cold_build_s']:12.2f} | {row['cold_per_note_ms']:11.2f} | "
                f"{row['warm_query_ms']:13.1f} | {row['one_edit_ms']:11.1f} | {row['command_ms']:10.1f} | "
                f"{row['imports_ms']:10.1f} | {row['bare_python_ms']:10.1f} | {row['index_mib']:.1f}"
            )
        flat_us, ruamel_us = bench_frontmatter(1000, args.repeat)
        print()
        print("frontmatter read per note | flatyaml us | ruamel.yaml us | ratio")
        print(f"1,000 generated notes | {flat_us:.1f} | {ruamel_us:.1f} | {ruamel_us / flat_us:.1f}x")
        print()
        print(f"journal search over one journal of {args.journal_lines:,} lines")
        print("case | median s | used_window_lines | results")
        for label, seconds, window, count in bench_journal(args.journal_lines, max(3, args.repeat // 2), work):
            print(f"{label} | {seconds:.3f} | {window:,} | {count}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
