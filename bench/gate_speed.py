"""Secret gate speed in CPU time, to compare two versions of the gate on a busy machine.

    python bench/gate_speed.py [--src DIR] [--repeat 15] [--rounds 3]

`scan_text` over the clean prose notes of `secrets_bench.py` (the common case on the hook's cold path)
and over the secret-dense notes of `tests/secret_corpus.py`, in ms per KiB of process CPU time (the
fastest of `--repeat` passes, so that other processes on a shared machine count as little as they
can). `--src` points at another checkout's `src` folder (for the version before a change:
`mkdir -p ../gate-before && git archive <commit> src | tar -x -C ../gate-before`, then
`--src ../gate-before/src`); the notes always
come from this checkout, so both versions judge the same text. Run the two in turns, `--rounds` times
each. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_MEASURE = """
import json, sys, time
sys.path.insert(0, {src!r})
from continuity.gate.secrets import scan_text
import continuity.gate.secrets as gate
assert gate.__file__.startswith({src!r}), gate.__file__
prose, dense = json.load(open({notes!r}, encoding="utf-8"))
def rate(texts):
    kib = sum(len(t.encode()) for t in texts) / 1024
    for t in texts: scan_text(t)
    best = 1e9
    for _ in range({repeat}):
        start = time.process_time()
        for t in texts: scan_text(t)
        best = min(best, time.process_time() - start)
    return best * 1000 / kib
print(f"{{rate(prose):.3f}} {{rate(dense):.3f}}")
"""


def measure(src: Path, notes: Path, repeat: int) -> tuple[float, float]:
    code = _MEASURE.format(src=str(src), notes=str(notes), repeat=repeat)
    out = subprocess.run([sys.executable, "-I", "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def notes_file(folder: Path) -> Path:
    """The clean prose notes and the secret-dense notes, from this checkout, written once for both versions."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "bench"))
    import secret_corpus
    from secrets_bench import prose_notes

    path = folder / "notes.json"
    path.write_text(json.dumps([prose_notes(), [s.text for s in secret_corpus.positives()]]), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--src", type=Path, help="another checkout's src folder, measured in turns with this one")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    versions = {"this checkout": ROOT / "src"}
    if args.src:
        versions = {"--src": args.src.resolve(), **versions}
    print(f"{'version':14} {'clean prose ms/KiB':>19} {'secret-dense ms/KiB':>20}")
    with tempfile.TemporaryDirectory(prefix="gate-speed-") as folder:
        notes = notes_file(Path(folder))
        for _ in range(args.rounds):
            for name, src in versions.items():
                prose, dense = measure(src, notes, args.repeat)
                print(f"{name:14} {prose:19.3f} {dense:20.3f}")
    print(f"(process CPU time, fastest of {args.repeat} passes; {time.strftime('%H:%M')})")


if __name__ == "__main__":
    main()
