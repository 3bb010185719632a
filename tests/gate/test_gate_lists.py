"""A list of words is not an assignment, whatever the words are.

`tags: ["secrets", "1password", "credentials"]` once read as `"secrets", "1password"`, a name and a
quoted value as in `getenv("SECRET", "…")`, and the note about where secrets live was withheld from
recall and sync. A comma pairs a name with a value only when the name is the first argument of a call
or tuple; in a list the strings are items. Generated here over lists of the gate's own label words in
every flow-list form notes use, with the argument form still caught.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from continuity.gate import secrets

WORDS = [
    "secrets",
    "secret",
    "password",
    "passwords",
    "1password",
    "token",
    "tokens",
    "credentials",
    "api-key",
    "pin",
    "passphrase",
    "auth",
    "vault",
]
WORDS += ["rotation", "security", "ssh", "keys", "incident", "hunter2x"]
LABELS = ["tags", "labels", "aliases", "keywords", "topics", "categories"]


@settings(max_examples=300)
@given(
    st.sampled_from(LABELS),
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
    st.sampled_from(['"', "'"]),
    st.sampled_from([": ", " = ", ":"]),
)
def test_a_list_of_words_under_any_label_is_no_secret(label: str, items: list[str], quote: str, op: str) -> None:
    text = f"{label}{op}[" + ", ".join(f"{quote}{item}{quote}" for item in items) + "]"
    assert secrets.scan_text(text) == [], text


def test_a_name_and_value_as_a_calls_first_arguments_is_still_caught() -> None:
    for text in ('os.getenv("DB_PASSWORD", "Sup3rS3cret!")', 'env.get("API_PASSWORD", "hunter2x")'):
        assert secrets.scan_text(text), text
