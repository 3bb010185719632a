"""The writing contexts of `blind_corpus`: where and how people put a credential into a note.

Each context takes a label (what the person called the value), the value and a seeded random source,
and returns the snippet: env, YAML, JSON, TOML, INI, XML element and attribute, code defaults,
Dockerfile, flags, PowerShell, headers, prose with and without a label, inline code among other
commands, tables, a value split over two lines, Kubernetes `env`, Terraform; the multi-line ones for
key blocks; and the prose ones for passphrases.
"""

from __future__ import annotations

import random
from collections.abc import Callable


def words_of(label: str) -> str:
    """`DB_PASSWORD`, `dbPassword` -> `db password`, as a sentence names it."""
    spaced = "".join(f" {c}" if c.isupper() and i and label[i - 1].islower() else c for i, c in enumerate(label))
    return " ".join(spaced.replace("_", " ").replace("-", " ").replace(".", " ").lower().split())


def kebab(label: str) -> str:
    return words_of(label).replace(" ", "-")


def pascal(label: str) -> str:
    return "".join(word.capitalize() for word in words_of(label).split())


def quoted_json(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def split_two(label: str, value: str, r: random.Random) -> str:
    at = r.randint(len(value) // 3, 2 * len(value) // 3)
    if r.random() < 0.5:
        return f'{label} = (\n    "{value[:at]}"\n    "{value[at:]}"\n)'
    return f'export {label}="{value[:at]}\\\n{value[at:]}"'


Context = Callable[[str, str, random.Random], str]

LABELLED: tuple[tuple[str, Context], ...] = (
    ("env-export", lambda L, v, r: f"```bash\nexport {L}='{v}'\n```"),
    ("dotenv", lambda L, v, r: f"```\n{L}={v}\n```"),
    ("yaml", lambda L, v, r: f'```yaml\nservice:\n  {L}: "{quoted_json(v)}"\n```'),
    ("json", lambda L, v, r: f'```json\n{{\n  "name": "svc",\n  "{L}": "{quoted_json(v)}"\n}}\n```'),
    ("toml", lambda L, v, r: f'```toml\n[service]\n{L} = "{quoted_json(v)}"\n```'),
    ("ini", lambda L, v, r: f"```ini\n[default]\n{L} = {v}\n```"),
    ("xml-element", lambda L, v, r: f"```xml\n<credentials>\n  <id>deploy</id>\n  <{L}>{v}</{L}>\n</credentials>\n```"),
    ("xml-attribute", lambda L, v, r: f'```xml\n<appSettings>\n  <add key="{L}" value="{v}" />\n</appSettings>\n```'),
    ("getenv-default", lambda L, v, r: f'```python\nsecret = os.getenv("{L}", "{v}")\n```'),
    ("environ-get", lambda L, v, r: f"```python\nvalue = os.environ.get('{L}', '{v}')\n```"),
    ("kotlin-elvis", lambda L, v, r: f'```kotlin\nval cfg = System.getenv("{L}") ?: "{v}"\n```'),
    ("js-default", lambda L, v, r: f'```js\nconst cfg = process.env.{L} || "{v}";\n```'),
    ("dockerfile", lambda L, v, r: f"```dockerfile\nFROM python:3.12-slim\nENV {L} {v}\n```"),
    ("cli-flag", lambda L, v, r: f"Ran `svcctl login --{kebab(L)} {v} --region eu-west-1` and it worked."),
    ("powershell", lambda L, v, r: f'```powershell\nConnect-Service -Name prod -{pascal(L)} "{v}"\n```'),
    ("header", lambda L, v, r: f'```\ncurl -s -H "{pascal(L)}: {v}" https://api.example.net/v2/items\n```'),
    ("prose-label", lambda L, v, r: f"The {words_of(L)} is {v} until we rotate it next week."),
    ("prose-colon", lambda L, v, r: f"Note to self, {words_of(L)}: {v}"),
    ("inline-commands", lambda L, v, r: f"Deploy: `cd services/api && export {L}={v} && make migrate && make up`"),
    ("table", lambda L, v, r: f"| setting | value |\n|---|---|\n| region | eu-west-1 |\n| {L} | {v} |"),
    ("split-lines", lambda L, v, r: f"```\n{split_two(L, v, r)}\n```"),
    ("k8s-env", lambda L, v, r: f'```yaml\nenv:\n  - name: {L}\n    value: "{quoted_json(v)}"\n```'),
    ("terraform", lambda L, v, r: f'```hcl\nresource "x" "y" {{\n  {L.lower()} = "{v}"\n}}\n```'),
)
UNLABELLED: tuple[tuple[str, Context], ...] = (
    ("bare-line", lambda L, v, r: f"Found this in the old runbook:\n\n{v}\n\nNo idea if it still works."),
    ("pasted", lambda L, v, r: f"I pasted {v} into the CI settings page."),
    ("inline-code", lambda L, v, r: f"The one from the vendor portal is `{v}`."),
    ("bearer", lambda L, v, r: f"```\ncurl https://api.example.net/me -H 'Authorization: Bearer {v}'\n```"),
)
MULTILINE: tuple[tuple[str, Context], ...] = (
    ("bare-block", lambda L, v, r: f"The key from the old box:\n\n{v}\n"),
    ("fenced", lambda L, v, r: f"```\n{v}\n```"),
    ("yaml-block", lambda L, v, r: "```yaml\n" + f"{L}: |\n" + "\n".join("  " + x for x in v.split("\n")) + "\n```"),
    ("env-quoted", lambda L, v, r: f'```\n{L}="{v}"\n```'),
)
PROSE_PASSWORDS: tuple[tuple[str, Context], ...] = (
    ("wifi", lambda L, v, r: f"The office Wi-Fi passphrase is {v} and the guest one is on the fridge."),
    ("wifi-network", lambda L, v, r: f"Wi-Fi: network Greenhouse-5G, password {v}"),
    ("told", lambda L, v, r: f"Ops told me the {words_of(L)} for the staging box is {v}, change it after the demo."),
)
