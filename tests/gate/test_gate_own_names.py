"""The names the tool gives files itself are never taken for secrets.

A handoff is named `<UTC date and time>-<device>-<slug>.md`; its compact timestamp (`20261207T170805Z`)
mixes digits with the capitals T and Z, so beside the folder's words it once read as a generated token
to the gate's generic layer, and every such handoff was held back from sync and withheld from output.
Generated here from any moment, any device id and any title the tool accepts.
"""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings, strategies as st

from continuity import ids
from continuity.gate import secrets
from continuity.memory.handoff_write import handoff_name

moments = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2099, 12, 31), timezones=st.just(dt.timezone.utc)
)
devices = st.from_regex(r"[a-z][a-z0-9]{0,12}(-[a-z0-9]{1,8}){0,2}", fullmatch=True)
titles = st.text(st.characters(whitelist_categories=("Lu", "Ll", "Nd", "Zs")), min_size=1, max_size=60)


@settings(max_examples=300)
@given(moments, devices, titles, st.integers(min_value=1, max_value=3))
def test_a_handoff_name_the_tool_makes_is_shown_and_journaled_as_it_is(
    moment: dt.datetime, device: str, title: str, attempt: int
) -> None:
    name = handoff_name(moment, device, ids.make_id(title, "handoff"), attempt)
    for rel in (name, f"20-state/handoffs/{name}", f"90-archive/20-state/handoffs/{name}"):
        assert secrets.shown_path(rel) == rel


def test_a_token_named_file_is_still_withheld() -> None:
    token = "ghp_" + "Zq8Jd9Lk2Pq7Rx3Vb6Nm1Tz4Hw5Yc0Fs2Ga7Ue"
    assert secrets.shown_path(f"20-state/handoffs/20261207T170805Z-{token}.md") != (
        f"20-state/handoffs/20261207T170805Z-{token}.md"
    )
