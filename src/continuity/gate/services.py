"""Secret detectors for credentials that only a service's name makes one: client ids and friends.

Many services issue a credential pair whose public half has no format of its own: a client id, an
access id, an app id (Adobe, Asana, Bitbucket, Discord, LinkedIn, Looker, Plaid, Sendbird, Sumo
Logic...). gitleaks and trufflehog flag them under the service's name, because together with the
secret half they open the account, and the secret half is usually pasted right beside them. A
value counts when the name says both the service and the kind of id (`ADOBE_CLIENT_ID = …`), and
the value is generated material: random text, a long digit string or a UUID. `commit_id`, `org_id`
or a service's name alone (`sentry_release`) never make a value a secret. Also here, because they
are written under a name rather than with a prefix: Sidekiq's gem-server credentials
(`BUNDLE_ENTERPRISE__CONTRIBSYS__COM`) and Facebook's app access tokens (`<app id>|<secret>`).
"""

from __future__ import annotations

from continuity.gate import shapes
from continuity.gate.doc import Candidate, Doc, rx
from continuity.gate.shapes import words

# Services whose ids gitleaks and trufflehog treat as credentials (lower case, words run together).
SERVICE_WORDS = words(
    "adafruit adobe airtable algolia alibaba asana atlassian auth0 beamer bitbucket bittrex braintree "
    "circleci clickup cloudflare codecov cohere coinbase confluent contentful datadog discord droneci dropbox "
    "etsy facebook fastly finicity finnhub flickr freshbooks gitter gocardless heroku hubspot intercom jfrog "
    "kraken kucoin launchdarkly linkedin looker mailchimp mailgun mapbox mattermost messagebird mixpanel "
    "netlify newrelic nytimes okta pagerduty paypal plaid privateai pusher rapidapi razorpay sendbird "
    "segment shopify snyk squarespace sumologic sumo telegram travis twitch twitter yandex zendesk zoom"
)

# An assigned `id` first (a literal start the engine finds quickly), then the kind of id before it
# and the value after it; the service's name is read backwards from there.
_ID_ASSIGNED = r"id[\"']?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}[\"'`]?([A-Za-z0-9\-]{14,80})[\"'`]?(?![A-Za-z0-9\-])"
_KIND_BEFORE = r"(client|access|api|app|consumer|oauth)[_.\-]?$"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _service_ids(doc: Doc) -> list[Candidate]:
    """`<service>_client_id = <generated value>` for a service in `SERVICE_WORDS`."""
    matcher, haystack = doc.caseless(_ID_ASSIGNED)
    text = doc.text
    out: list[Candidate] = []
    for match in matcher.finditer(haystack):
        kind = rx(_KIND_BEFORE).search(haystack[max(0, match.start() - 9) : match.start()].lower())
        if kind is None:
            continue
        begin = match.start()
        while begin > 0 and match.start() - begin < 60 and haystack[begin - 1].lower() in _NAME_CHARS:
            begin -= 1
        name = haystack[begin : match.start()].lower().replace("_", "").replace("-", "").replace(".", "")
        if not any(service in name for service in SERVICE_WORDS):
            continue
        value = text[match.start(1) : match.end(1)]
        if generated_id(value, kind.group(1)):
            out.append((begin, "service-client-id", value))
    return out


def generated_id(value: str, kind: str = "client") -> bool:
    """Random text, a long digit string that is no pattern, or a UUID: what a service issues.

    A UUID counts as a client, access or API id; an app id that is a UUID names an app (Heroku's do)."""
    if shapes.filler(value):
        return False
    if value.isdigit():
        return len(value) >= 15 and len(set(value)) >= 6
    pieces = value.split("-")
    if len(pieces) == 5 and [len(p) for p in pieces] == [8, 4, 4, 4, 12]:
        return kind != "app" and shapes.shannon_entropy(value.replace("-", "")) >= 3.0  # app ids are UUIDs
    mixed = any(c.isdigit() for c in value) or (any(c.isupper() for c in value) and any(c.islower() for c in value))
    return shapes.looks_random(value.replace("-", ""), 14) and mixed


def _sidekiq(doc: Doc) -> list[Candidate]:
    """Sidekiq Pro/Enterprise gem-server credentials, as Bundler keeps them: `<8 hex>:<8 hex>`."""
    if "contribsys__com" not in doc.lowered:
        return []
    matcher, haystack = doc.caseless(
        r"bundle_(?:enterprise|gems)__contribsys__com[\"']?[ \t]{0,4}(?::=|=|:)[ \t]{0,4}[\"']?"
        r"([0-9a-f]{8}:[0-9a-f]{8})(?![0-9a-z])"
    )
    return [
        (m.start(), "sidekiq-credentials", m.group(1))
        for m in matcher.finditer(haystack)
        if not shapes.filler(m.group(1).replace(":", ""))
    ]


def _facebook_app_tokens(doc: Doc) -> list[Candidate]:
    """`<15 or 16 digit app id>|<app secret>`: Facebook's app access token."""
    text = doc.text
    if "|" not in text:
        return []
    out: list[Candidate] = []
    matcher, haystack = doc.caseless(r"(?<![0-9a-z])[0-9]{15,16}(?:\||%7c)([0-9a-z_\-]{27,40})(?![0-9a-z_\-])")
    for match in matcher.finditer(haystack):
        secret = text[match.start(1) : match.end(1)]
        if shapes.looks_random(secret, 24) and not shapes.filler(secret):
            out.append((match.start(), "facebook-app-token", text[match.start() : match.end()]))
    return out


FINDERS = (_service_ids, _sidekiq, _facebook_app_tokens)
