"""detect-secrets, behind one adapter: the few formats its plugins know that the gate's own do not.

detect-secrets costs a few hundred milliseconds to import, so it is imported only for a line shaped
like a key that only its plugins know (Discord bot tokens, Artifactory, IBM Cloud, IBM COS,
SoftLayer, Cloudant), and only the matching lines go to it.
"""

from __future__ import annotations

from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import filler

# Plugins whose formats the project's own rules do not cover; everything else is ours, so the heavy
# import is paid only for the rare line that names one of these services.
DETECT_SECRETS_PLUGINS = (
    "ArtifactoryDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "SoftlayerDetector",
)
_DS_DETECTORS = {
    "Artifactory Credentials": "artifactory-token",
    "Cloudant Credentials": "cloudant-credentials",
    "Discord Bot Token": "discord-bot-token",
    "IBM Cloud IAM Key": "ibm-cloud-iam-key",
    "IBM COS HMAC Credentials": "ibm-cos-hmac-key",
    "SoftLayer Credentials": "softlayer-api-key",
}
# Shapes of what the adapter's plugins look for, slightly wider than theirs: the whole note is
# searched for them (C speed), and only lines with a match go to detect-secrets.
_DS_SHAPES = (
    r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",  # Discord bot token
    r"AKC[A-Za-z0-9]{10}|AP[0-9A-F][A-Za-z0-9]{8}",  # Artifactory
)
# IBM Cloud, IBM COS, SoftLayer and Cloudant keys follow a name that says so.
_DS_NAMES = ("ibm", "softlayer", "cloudant", "hmac")


def candidates(doc: Doc) -> list[Candidate]:
    """Values only detect-secrets' plugins know, on the lines whose shape they look for."""
    text = doc.text
    wanted: set[int] = set()
    for shape in _DS_SHAPES:
        wanted.update(doc.line_of(m.start()) for m in rx(shape).finditer(text))
    if any(name in doc.lowered for name in _DS_NAMES):
        long_run = rx(r"[A-Za-z0-9_\-]{24}")
        for number, line in enumerate(doc.lines, start=1):
            lowered = line.lower()
            if (
                any(name in lowered for name in _DS_NAMES)
                and any(word in lowered for word in ("key", "pwd", "pass", "token"))
                and long_run.search(line)
            ):
                wanted.add(number)
    if not wanted:
        return []
    lines = [(number, doc.lines[number - 1].rstrip("\r")) for number in sorted(wanted)]
    found = detect_secrets_scan(lines)
    return [(doc.starts[number - 1], detector, value) for number, detector, value in found if not filler(value)]


def detect_secrets_scan(lines: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """Run detect-secrets' plugins on in-memory lines: (line number, detector id, value).

    Uses `detect_secrets.core.scan.scan_line`, the public entry point behind `detect-secrets scan
    --string` (present from 1.0 on; the range in pyproject starts at 1.4, the first release with the
    Discord plugin), inside `transient_settings` so that the process-wide settings, which `scan_line`
    itself adjusts, are restored afterwards. Heuristic filters are off: they drop real secrets, and
    the project's own placeholder checks run on our rules instead. Each line is scanned alone, so a
    plugin's context is that line. Not thread-safe: detect-secrets' settings are process-wide.
    """
    if not lines:
        return []
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    config = {
        "plugins_used": [{"name": name} for name in DETECT_SECRETS_PLUGINS],
        "filters_used": [],
    }
    out: list[tuple[int, str, str]] = []
    with transient_settings(config):
        for number, line in lines:
            for secret in scan_line(line):
                value = secret.secret_value or ""
                detector = _DS_DETECTORS.get(secret.type, "detect-secrets")
                out.append((number, detector, value))
    return out
