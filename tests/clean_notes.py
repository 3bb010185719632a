"""Clean engineering notes for measuring the secret gate's false positives: none holds a secret.

Written before the gate's generic layer, as people write notes about builds, deploys and incidents:
commit SHAs, lockfile integrity hashes, UUIDs and ULIDs, cache keys, base64 images, content digests
(images, artifacts, Git LFS, IPFS), public ids (Stripe prices and products, Slack channels, Twilio
account SIDs, AWS ARNs, YouTube and Drive ids), docs that discuss tokens and passwords without a value,
Kubernetes manifests that reference secrets without holding them, log excerpts, test output, SSH and
GPG public material. Every note is generated from a seed; `notes(seed)` returns at least 1,000.
"""

# ruff: noqa: E501  (data: one generated note shape a line reads better than a wrapped one)

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable

from secret_corpus import Sample, rs

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

Template = Callable[[random.Random], str]


def sha(r: random.Random, n: int = 40) -> str:
    return rs(r, HEX, n)


def uid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128)))


def b64(r: random.Random, n: int) -> str:
    return base64.b64encode(r.randbytes(n)).decode()


def _commits(r: random.Random) -> str:
    lines = [
        f"{sha(r, 7)} {r.choice(('fix', 'feat', 'chore'))}: {r.choice(('retry on 429', 'bump deps', 'split parser'))}"
        for _ in range(r.randint(3, 8))
    ]
    return "Recent history:\n\n```\n" + "\n".join(lines) + f"\n```\n\nReverted {sha(r)} after the canary failed."


def _merge(r: random.Random) -> str:
    return f"Merged PR #{r.randint(100, 9999)} as {sha(r)}; the release tag v{r.randint(1, 9)}.{r.randint(0, 30)}.0 points at commit {sha(r)}."


def _npm_lock(r: random.Random) -> str:
    return (
        '```json\n"node_modules/left-pad": {\n  "version": "1.3.0",\n'
        f'  "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n'
        f'  "integrity": "sha512-{b64(r, 64)}"\n}}\n```'
    )


def _yarn_lock(r: random.Random) -> str:
    return f'```\nlodash@^4.17.21:\n  version "4.17.21"\n  resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{sha(r)}"\n  integrity sha512-{b64(r, 64)}\n```'


def _pip_hashes(r: random.Random) -> str:
    return f"```\nrequests==2.32.3 \\\n    --hash=sha256:{sha(r, 64)} \\\n    --hash=sha256:{sha(r, 64)}\n```"


def _go_sum(r: random.Random) -> str:
    return f"```\ngolang.org/x/sys v0.21.0 h1:{b64(r, 32)}\ngolang.org/x/sys v0.21.0/go.mod h1:{b64(r, 32)}\n```"


def _cargo(r: random.Random) -> str:
    return f'```toml\n[[package]]\nname = "serde"\nversion = "1.0.203"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{sha(r, 64)}"\n```'


def _uuids(r: random.Random) -> str:
    return f"Tenant {uid(r)} was migrated; request id {uid(r)} shows the retry. Workspace id: `{uid(r)}`."


def _ulids(r: random.Random) -> str:
    return f"Job ids from the queue: {rs(r, CROCKFORD, 26)}, {rs(r, CROCKFORD, 26)} (ULIDs, sortable by time)."


def _cache_keys(r: random.Random) -> str:
    return (
        f"CI cache key changed to `v3-deps-linux-{sha(r, 64)}`, so the first run was cold.\n"
        f"Restored cache key: node-modules-{sha(r, 16)}-{sha(r, 16)}"
    )


def _gha_cache(r: random.Random) -> str:
    return f"```yaml\n- uses: actions/cache@v4\n  with:\n    path: ~/.cache/pip\n    key: ${{{{ runner.os }}}}-pip-${{{{ hashFiles('**/requirements.txt') }}}}\n```\nLast hit: Linux-pip-{sha(r, 64)}"


def _image_b64(r: random.Random) -> str:
    return f"Inline icon for the status page:\n\n![ok](data:image/png;base64,iVBORw0KGgo{b64(r, r.randint(60, 300))})"


def _docker_digest(r: random.Random) -> str:
    return f"Pinned the base image: `FROM python:3.12-slim@sha256:{sha(r, 64)}`.\nThe old one was sha256:{sha(r, 64)}."


def _artifact_digest(r: random.Random) -> str:
    return f"Release artifact checksums:\n\n```\n{sha(r, 64)}  app-linux-amd64.tar.gz\n{sha(r, 64)}  app-darwin-arm64.tar.gz\n```"


def _lfs(r: random.Random) -> str:
    return f"```\nversion https://git-lfs.github.com/spec/v1\noid sha256:{sha(r, 64)}\nsize {r.randint(1000, 9999999)}\n```"


def _ipfs(r: random.Random) -> str:
    return f"The dataset snapshot is pinned on IPFS, CID Qm{rs(r, B58, 44)}; the manifest CID is bafy{rs(r, 'abcdefghijklmnopqrstuvwxyz234567', 55)}."


def _etag(r: random.Random) -> str:
    return f'The CDN returned `ETag: "{sha(r, 32)}"` and `x-amz-request-id: {rs(r, "0123456789ABCDEF", 16)}` for the stale object.'


def _stripe_ids(r: random.Random) -> str:
    return (
        f"Pricing: monthly plan is price_{rs(r, ALNUM, 24)}, yearly price_{rs(r, ALNUM, 24)}, "
        f"product prod_{rs(r, ALNUM, 14)}. Test customer cus_{rs(r, ALNUM, 14)}, invoice in_{rs(r, ALNUM, 24)}."
    )


def _slack_ids(r: random.Random) -> str:
    return f"Alerts go to channel C{rs(r, '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ', 10)} (#ops-alerts); ping user U{rs(r, '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ', 10)} for approvals."


def _twilio_sid(r: random.Random) -> str:
    return (
        f"Messaging service MG{sha(r, 32)} under account AC{sha(r, 32)}; the auth token lives in the secrets manager."
    )


def _arns(r: random.Random) -> str:
    return f"Role arn:aws:iam::{rs(r, '0123456789', 12)}:role/deploy-{rs(r, 'abcdefghijklmnopqrstuvwxyz', 6)} assumes into bucket arn:aws:s3:::logs-{r.randint(100, 999)}."


def _public_ids(r: random.Random) -> str:
    return (
        f"Demo video: https://www.youtube.com/watch?v={rs(r, URLSAFE, 11)}; spec in "
        f"https://docs.google.com/document/d/{rs(r, URLSAFE, 44)}/edit; design at https://www.figma.com/file/{rs(r, ALNUM, 22)}/Checkout"
    )


def _trace(r: random.Random) -> str:
    return f"trace_id={sha(r, 32)} span_id={sha(r, 16)} parent={sha(r, 16)} took {r.randint(10, 900)} ms"


def _token_docs(r: random.Random) -> str:
    return (
        r.choice(
            (
                "Rotate the GITHUB_TOKEN every 90 days; the workflow reads it from `secrets.GITHUB_TOKEN`.",
                "Set `API_KEY` in the environment before running the importer; never commit it.",
                "The password policy is now 14 characters minimum, checked against the breach list.",
                "Tokens expire after an hour; the client refreshes them with the refresh token flow.",
                "Store the database password in the secrets manager, not in `.env`; see the runbook.",
                "If the API key leaks, revoke it in the dashboard and create a new one.",
                "Use `gh auth login` instead of pasting a personal access token.",
                "The session cookie is HttpOnly and Secure; CSRF tokens are per form.",
            )
        )
        + f" (decided {r.randint(1, 28)} March)"
    )


def _env_example(r: random.Random) -> str:
    return "```\nDATABASE_URL=postgres://user:password@localhost:5432/app\nAPI_KEY=\nSECRET_KEY=${SECRET_KEY}\nSTRIPE_SECRET_KEY=sk_test_...\nPASSWORD=<your-password>\n```"


def _k8s_deploy(r: random.Random) -> str:
    return (
        "```yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: api\n          image: registry.example.com/api@sha256:{sha(r, 64)}\n"
        "          env:\n            - name: DB_PASSWORD\n              valueFrom:\n                secretKeyRef:\n"
        "                  name: db-credentials\n                  key: password\n```"
    )


def _k8s_configmap(r: random.Random) -> str:
    return (
        "```yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n"
        f'  LOG_LEVEL: info\n  FEATURE_FLAGS: checkout,search\n  BUILD_SHA: {sha(r)}\n  TOKEN_TTL_SECONDS: "3600"\n```'
    )


def _logs(r: random.Random) -> str:
    return "\n".join(
        f"2025-0{r.randint(1, 9)}-1{r.randint(0, 9)}T10:{r.randint(10, 59)}:0{r.randint(0, 9)}Z INFO req={uid(r)} "
        f"user_hash={sha(r, 16)} path=/api/v1/orders status={r.choice((200, 201, 404, 429))}"
        for _ in range(r.randint(3, 7))
    ).join(("```\n", "\n```"))


def _pytest_out(r: random.Random) -> str:
    return f"```\n==== {r.randint(100, 900)} passed, {r.randint(0, 5)} skipped in {r.randint(5, 99)}.{r.randint(10, 99)}s ====\nseed: {r.randint(10**8, 10**9)}\n```"


def _ssh_pub(r: random.Random) -> str:
    return f"Added the CI key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(r, 32)[:43]} ci@build`; host key fingerprint SHA256:{b64(r, 32)[:43]}."


def _gpg(r: random.Random) -> str:
    fp = rs(r, "0123456789ABCDEF", 40)
    return f"Release signing key fingerprint: {' '.join(fp[i : i + 4] for i in range(0, 40, 4))}"


def _config_numbers(r: random.Random) -> str:
    return f"```yaml\nmax_tokens: {r.choice((1024, 4096, 8192))}\npassword_min_length: 14\ntoken_ttl: 3600\nkey_rotation_days: 90\nsecret_scanning: enabled\n```"


def _build_files(r: random.Random) -> str:
    return f"The bundle is now main.{sha(r, 8)}.js and vendor.{sha(r, 20)}.js; chunk {sha(r, 8)} dropped 40 KiB."


def _sri(r: random.Random) -> str:
    return f'```html\n<script src="https://cdn.example.com/lib.min.js" integrity="sha384-{b64(r, 48)}" crossorigin="anonymous"></script>\n```'


def _terraform_plan(r: random.Random) -> str:
    return f'```\n  ~ resource "aws_db_instance" "main" {{\n      ~ password = (sensitive value)\n        id       = "db-{rs(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 26)}"\n    }}\n```'


def _prose_keys(r: random.Random) -> str:
    return (
        r.choice(
            (
                "The key insight: the primary key of the events table must include the tenant.",
                "Key points from the retro: fewer alerts, clearer ownership, a weekly token budget for the LLM.",
                "The sort key is (created_at, id); the partition key is the tenant id.",
                "Pass the flag `--no-cache` to rebuild; the secret sauce was the smaller batch size.",
            )
        )
        + f" Ticket OPS-{r.randint(100, 9999)}."
    )


def _sentry_event(r: random.Random) -> str:
    return f"Sentry event {sha(r, 32)} (issue PROJ-{rs(r, 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789', 3)}) came from release {sha(r, 12)}."


def _notion_ids(r: random.Random) -> str:
    return f"Specs live at https://www.notion.so/team/Payments-{sha(r, 32)} and the board id is {sha(r, 32)}."


TEMPLATES: tuple[tuple[str, Template], ...] = tuple(
    (name.strip("_").replace("_", "-"), fn)
    for name, fn in sorted(globals().items())
    if name.startswith("_") and callable(fn) and name not in ("__builtins__",) and fn.__module__ == __name__
)

TITLES = ("Build notes", "Deploy log", "Incident review", "Release checklist", "Onboarding notes", "Session")
LEADS = (
    "Quick notes from today.",
    "What changed and why, for the next session.",
    "Facts worth keeping from the investigation.",
    "Summary after the pairing session.",
)


def notes(seed: int = 26, count: int = 1200) -> list[Sample]:
    """`count` clean notes, two or three snippets each, deterministic per seed."""
    r = random.Random(seed)
    out: list[Sample] = []
    for index in range(count):
        chosen = [
            TEMPLATES[(index + k * 7) % len(TEMPLATES)] if k == 0 else r.choice(TEMPLATES)
            for k in range(r.randint(2, 3))
        ]
        body = "\n\n".join(fn(r) for _, fn in chosen)
        head = f"---\nid: note-{index}\ntype: {r.choice(('fact', 'session', 'lesson'))}\n---\n"
        out.append(Sample(chosen[0][0], "clean", f"{head}# {r.choice(TITLES)}\n\n{r.choice(LEADS)}\n\n{body}\n", ""))
    return out
