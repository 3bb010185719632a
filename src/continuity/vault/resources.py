"""Where the note templates (`templates/`) and the new vault's skeleton (`vault-template/`) are.

A checkout keeps them at its top, where people look for them; a package installation carries them
inside the package (`continuity/_templates`, `continuity/_vault_template`, see pyproject.toml). A
module of its own, with nothing but `pathlib`, so that the note writer finds a template without
loading onboarding (its `socket`, `subprocess` and `secrets`).
"""

from __future__ import annotations

from pathlib import Path

from continuity.errors import NotConnected

_PACKAGE = Path(__file__).resolve().parents[1]
_CHECKOUT = _PACKAGE.parents[1]  # src/continuity -> the checkout, for an editable install
_PACKAGED = {"templates": "_templates", "vault-template": "_vault_template"}


def resource_dir(name: str) -> Path:
    """`templates/` or `vault-template/`: the checkout's own, else the copy installed in the package."""
    for folder in (_CHECKOUT / name, _PACKAGE / _PACKAGED[name]):
        if folder.is_dir():
            return folder
    raise NotConnected(f"cannot find {name}/ beside or inside the package; reinstall continuity")
