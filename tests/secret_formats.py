"""A corpus for the secret gate built from the public rule sets of gitleaks and trufflehog.

One case a rule or shape, each with a matching hard negative. The token formats are those of
gitleaks' rules (`cmd/generate/config/rules/*.go`: one entry each, under the rule's id), written here
as shapes: `{h32}` is 32 characters of the alphabet `h`; the older formats, header forms and labelled
values beside them are among those trufflehog's detectors look for. Values
are generated from each shape with a generator seeded by the case's name, so the corpus is the same
on every run and holds no copied secret; no complete token is written in this file. A rule whose
value only means something under its service's name (gitleaks' keyword rules) carries that name as
a label; the others stand alone in a sentence.

The negatives are what the gate must let through: each format filled with a filler, a sequence or
an EXAMPLE marker, and the kinds of text that look like secrets without being any (commit hashes,
UUIDs, content digests, lockfile hashes, base64 images, version strings, prose about passwords).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from secret_corpus import DASHES, j, pem

ALPHABETS = {
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "x": "0123456789abcdefABCDEF",
    "d": string.digits,
    "l": string.ascii_lowercase + string.digits,
    "u": string.ascii_uppercase + string.digits,
    "a": string.ascii_letters + string.digits,
    "w": string.ascii_letters + string.digits + "_-",
    "s": string.ascii_lowercase + string.digits + "_-",
    "b": string.ascii_letters + string.digits + "+/",
    "z": string.ascii_lowercase,
    "B": string.ascii_uppercase + "234567",
    "C": "023456789ACDEFGHJKLMNPQRSTUVWXYZ",  # bech32, as age writes it
}
_SLOT = re.compile(r"\{([a-zA-Z])([0-9]+)\}")


@dataclass(frozen=True)
class Case:
    family: str  # what the per-family report groups by (a vendor, a shape, a kind of negative)
    name: str  # the rule, shape or negative the case stands for
    text: str  # the whole note
    secret: bool  # does the note hold a secret?
    group: str = "gitleaks"  # the corpus part: gitleaks' rules, or one of `SHAPED_GROUPS`


# (gitleaks rule id, label, shape): a label names the service for a keyword rule; "" stands alone;
# a shape starting with "@" is built by the function of that name in `_BUILDERS`.
GITLEAKS_RULES: tuple[tuple[str, str, str], ...] = (
    ("1password-secret-key", "", "A3-{u6}-{u11}-{u5}-{u5}-{u5}"),
    ("1password-service-account-token", "", "ops_eyJ{b250}="),
    ("adafruit-api-key", "adafruit_api_key", "{s32}"),
    ("adobe-client-id", "adobe_client_id", "{h32}"),
    ("adobe-client-secret", "", "p8e-{l32}"),
    ("age-secret-key", "", "AGE-SECRET-KEY-1{C58}"),
    ("airtable-api-key", "airtable_api_key", "{l17}"),
    ("airtable-personnal-access-token", "", "pat{a14}.{h64}"),
    ("algolia-api-key", "algolia_api_key", "{l32}"),
    ("alibaba-access-key-id", "", "LTAI{l20}"),
    ("alibaba-secret-key", "alibaba_secret_key", "{l30}"),
    ("anthropic-admin-api-key", "", "sk-ant-admin01-{w93}AA"),
    ("anthropic-api-key", "", "sk-ant-api03-{w93}AA"),
    ("artifactory-api-key", "", "AKCp{a69}"),
    ("artifactory-reference-token", "", "cmVmd{a59}"),
    ("asana-client-id", "asana_client_id", "{d16}"),
    ("asana-client-secret", "asana_client_secret", "{l32}"),
    ("atlassian-api-token", "atlassian_api_token", "{l20}{h4}"),
    ("authress-service-client-access-key", "", "sc_{l17}.{l5}.acc_{l21}.{b30}"),
    ("aws-access-token", "", "A3T{u1}{B16}"),
    ("aws-amazon-bedrock-api-key-long-lived", "", "ABSK{b109}="),
    ("aws-amazon-bedrock-api-key-short-lived", "", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{b64}"),
    ("azure-ad-client-secret", "", "{a3}{d1}Q~{w32}"),
    ("beamer-api-token", "beamer_api_token", "b_{s44}"),
    ("bitbucket-client-id", "bitbucket_client_id", "{l32}"),
    ("bitbucket-client-secret", "bitbucket_client_secret", "{s64}"),
    ("bittrex-access-key", "bittrex_access_key", "{l32}"),
    ("bittrex-secret-key", "bittrex_secret_key", "{l32}"),
    ("cisco-meraki-api-key", "cisco_meraki_api_key", "{h40}"),
    ("clickhouse-cloud-api-secret-key", "", "4b1d{a38}"),
    ("clojars-api-token", "", "CLOJARS_{l60}"),
    ("cloudflare-api-key", "cloudflare_api_key", "{s40}"),
    ("cloudflare-global-api-key", "cloudflare_global_api_key", "{h37}"),
    ("cloudflare-origin-ca-key", "", "v1.0-{h24}-{h146}"),
    ("codecov-access-token", "codecov_access_token", "{l32}"),
    ("cohere-api-token", "cohere_api_key", "{a40}"),
    ("coinbase-access-token", "coinbase_access_token", "{s64}"),
    ("confluent-access-token", "confluent_access_token", "{l16}"),
    ("confluent-secret-key", "confluent_secret_key", "{l64}"),
    ("contentful-delivery-api-token", "contentful_delivery_api_token", "{s43}"),
    ("curl-auth-header", "", "@curl_auth_header"),
    ("curl-auth-user", "", "@curl_auth_user"),
    ("databricks-api-token", "", "dapi{h32}"),
    ("datadog-access-token", "datadog_access_token", "{l40}"),
    ("defined-networking-api-token", "defined_networking_api_token", "dnkey-{s26}-{s52}"),
    ("digitalocean-access-token", "", "doo_v1_{h64}"),
    ("digitalocean-pat", "", "dop_v1_{h64}"),
    ("digitalocean-refresh-token", "", "dor_v1_{h64}"),
    ("discord-api-token", "discord_api_token", "{h64}"),
    ("discord-client-id", "discord_client_id", "{d18}"),
    ("discord-client-secret", "discord_client_secret", "{s32}"),
    ("doppler-api-token", "", "dp.pt.{l43}"),
    ("droneci-access-token", "droneci_access_token", "{l32}"),
    ("dropbox-api-token", "dropbox_api_token", "{l15}"),
    ("dropbox-long-lived-api-token", "dropbox_long_lived_api_token", "{l11}AAAAAAAAAA{s43}"),
    ("dropbox-short-lived-api-token", "dropbox_short_lived_api_token", "sl.{s135}"),
    ("duffel-api-token", "", "duffel_test_{s43}"),
    ("dynatrace-api-token", "", "dt0c01.{l24}.{l64}"),
    ("easypost-api-token", "", "EZAK{l54}"),
    ("easypost-test-api-token", "", "EZTK{l54}"),
    ("etsy-access-token", "etsy_access_token", "{l24}"),
    ("facebook-access-token", "", "{d15}|{s33}"),
    ("facebook-page-access-token", "", "EAAM{a100}"),
    ("facebook-secret", "facebook_secret", "{h32}"),
    ("fastly-api-token", "fastly_api_token", "{s32}"),
    ("finicity-api-token", "finicity_api_token", "{h32}"),
    ("finicity-client-secret", "finicity_client_secret", "{l20}"),
    ("finnhub-access-token", "finnhub_access_token", "{l20}"),
    ("flickr-access-token", "flickr_access_token", "{l32}"),
    ("flutterwave-encryption-key", "", "FLWSECK_TEST-{h12}"),
    ("flutterwave-public-key", "", "FLWPUBK_TEST-{h32}-X"),
    ("flutterwave-secret-key", "", "FLWSECK_TEST-{h32}-X"),
    ("flyio-access-token", "", "fo1_{w43}"),
    ("frameio-api-token", "", "fio-u-{s64}"),
    ("freemius-secret-key", "", "@freemius_secret_key"),
    ("freshbooks-access-token", "freshbooks_access_token", "{l64}"),
    ("gcp-api-key", "", "AIza{w35}"),
    ("generic-api-key", "service_api_key", "{w24}"),
    ("github-app-token", "", "ghs_{a36}"),
    ("github-fine-grained-pat", "", "github_pat_{a22}_{a59}"),
    ("github-oauth", "", "gho_{a36}"),
    ("github-pat", "", "ghp_{a36}"),
    ("github-refresh-token", "", "ghr_{a36}"),
    ("gitlab-cicd-job-token", "", "glcbt-{a3}_{w20}"),
    ("gitlab-deploy-token", "", "gldt-{w20}"),
    ("gitlab-feature-flag-client-token", "", "glffct-{w20}"),
    ("gitlab-feed-token", "", "glft-{w20}"),
    ("gitlab-incoming-mail-token", "", "glimt-{w25}"),
    ("gitlab-kubernetes-agent-token", "", "glagent-{w50}"),
    ("gitlab-oauth-app-secret", "", "gloas-{w64}"),
    ("gitlab-pat", "", "glpat-{w20}"),
    ("gitlab-pat-routable", "", "glpat-{w27}.{l2}{l7}"),
    ("gitlab-ptt", "", "glptt-{h40}"),
    ("gitlab-rrt", "", "GR1348941{w20}"),
    ("gitlab-runner-authentication-token", "", "glrt-{w20}"),
    ("gitlab-runner-authentication-token-routable", "", "glrt-t{d1}_{w27}.{l2}{l7}"),
    ("gitlab-scim-token", "", "glsoat-{w20}"),
    ("gitlab-session-cookie", "", "_gitlab_session={l32}"),
    ("gitter-access-token", "gitter_access_token", "{s40}"),
    ("gocardless-api-token", "gocardless_api_token", "live_{s40}"),
    ("grafana-api-key", "", "eyJrIjoi{a70}="),
    ("grafana-cloud-api-token", "", "glc_{b32}="),
    ("grafana-service-account-token", "", "glsa_{a32}_{x8}"),
    ("harness-api-key", "", "pat.{w22}.{a24}.{a20}"),
    ("hashicorp-tf-api-token", "", "{l14}.atlasv1.{s65}"),
    ("hashicorp-tf-password", "", "@hashicorp_tf_password"),
    ("heroku-api-key", "heroku_api_key", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("heroku-api-key-v2", "", "HRKU-AA{w58}"),
    ("hubspot-api-key", "hubspot_api_key", "{H8}-{H4}-{H4}-{H4}-{H12}"),
    ("huggingface-access-token", "", "hf_{z34}"),
    ("huggingface-organization-api-token", "", "api_org_{z34}"),
    ("infracost-api-token", "", "ico-{a32}"),
    ("intercom-api-key", "intercom_api_key", "{s60}"),
    ("intra42-client-secret", "", "s-s4t2ud-{h64}"),
    ("jfrog-api-key", "jfrog_api_key", "{l73}"),
    ("jfrog-identity-token", "jfrog_identity_token", "{l64}"),
    ("jwt", "", "@jwt"),
    ("jwt-base64", "", "@jwt_base64"),
    ("kraken-access-token", "kraken_access_token", "{b85}"),
    ("kubernetes-secret-yaml", "", "@kubernetes_secret_yaml"),
    ("kucoin-access-token", "kucoin_access_token", "{h24}"),
    ("kucoin-secret-key", "kucoin_secret_key", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("launchdarkly-access-token", "launchdarkly_access_token", "{s40}"),
    ("linear-api-key", "", "lin_api_{l40}"),
    ("linear-client-secret", "linear_client_secret", "{h32}"),
    ("linkedin-client-id", "linkedin_client_id", "{l14}"),
    ("linkedin-client-secret", "linkedin_client_secret", "{l16}"),
    ("lob-api-key", "lob_api_key", "live_{h35}"),
    ("lob-pub-api-key", "lob_pub_api_key", "test_pub_{h31}"),
    ("looker-client-id", "looker_client_id", "{l20}"),
    ("looker-client-secret", "looker_client_secret", "{l24}"),
    ("mailchimp-api-key", "mailchimp_api_key", "{h32}-us{d1}{d1}"),
    ("mailgun-private-api-token", "mailgun_private_api_token", "key-{h32}"),
    ("mailgun-pub-key", "mailgun_pub_key", "pubkey-{h32}"),
    ("mailgun-signing-key", "mailgun_signing_key", "{h32}-{h8}-{h8}"),
    ("mapbox-api-token", "mapbox_api_token", "pk.{l60}.{l22}"),
    ("mattermost-access-token", "mattermost_access_token", "{l26}"),
    ("maxmind-license-key", "", "{a6}_{a29}_mmk"),
    ("messagebird-api-token", "messagebird_api_token", "{l25}"),
    ("messagebird-client-id", "messagebird_client_id", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    (
        "microsoft-teams-webhook",
        "",
        "https://contoso.webhook.office.com/webhookb2/{h8}-{h4}-{h4}-{h4}-{h12}@{h8}-{h4}-{h4}-{h4}-{h12}/IncomingWebhook/{h32}/{h8}-{h4}-{h4}-{h4}-{h12}",
    ),
    ("netlify-access-token", "netlify_access_token", "{s43}"),
    ("new-relic-browser-api-token", "new_relic_browser_api_token", "NRJS-{h19}"),
    ("new-relic-insert-key", "new_relic_insert_key", "NRII-{s32}"),
    ("new-relic-user-api-id", "new_relic_user_api_id", "{l64}"),
    ("new-relic-user-api-key", "new_relic_user_api_key", "NRAK-{l27}"),
    ("notion-api-token", "", "ntn_{d11}{a32}{a3}"),
    ("npm-access-token", "", "npm_{l36}"),
    ("nuget-config-password", "", "@nuget_config_password"),
    ("nytimes-access-token", "nytimes_access_token", "{s32}"),
    ("octopus-deploy-api-key", "", "API-{u26}"),
    ("okta-access-token", "okta_access_token", "00{w40}"),
    ("openai-api-key", "", "sk-proj-{w74}T3BlbkFJ{w74}"),
    ("openshift-user-token", "", "sha256~{w43}"),
    ("perplexity-api-key", "", "pplx-{a48}"),
    ("pkcs12-file", "", "@pkcs12_file"),
    ("plaid-api-token", "plaid_api_token", "access-sandbox-{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("plaid-client-id", "plaid_client_id", "{l24}"),
    ("plaid-secret-key", "plaid_secret_key", "{l30}"),
    ("planetscale-api-token", "", "pscale_tkn_{w48}"),
    ("planetscale-oauth-token", "", "pscale_oauth_{w48}"),
    ("planetscale-password", "", "pscale_pw_{w48}"),
    ("postman-api-token", "", "PMAK-{h24}-{h34}"),
    ("prefect-api-token", "", "pnu_{a36}"),
    ("private-key", "", "@private_key"),
    ("privateai-api-token", "privateai_api_token", "{l32}"),
    ("pulumi-api-token", "", "pul-{h40}"),
    ("pypi-upload-token", "", "pypi-AgEIcHlwaS5vcmc{w50}"),
    ("rapidapi-access-token", "rapidapi_access_token", "{s50}"),
    ("readme-api-token", "", "rdme_{l70}"),
    ("rubygems-api-token", "", "rubygems_{h48}"),
    ("scalingo-api-token", "", "tk-us-{w48}"),
    ("sendbird-access-id", "sendbird_access_id", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("sendbird-access-token", "sendbird_access_token", "{h40}"),
    ("sendgrid-api-token", "", "SG.{w22}.{w43}"),
    ("sendinblue-api-token", "", "xkeysib-{h64}-{l16}"),
    ("sentry-access-token", "sentry_access_token", "{h64}"),
    ("sentry-org-token", "", "@sentry_org_token"),
    ("sentry-user-token", "", "sntryu_{h64}"),
    ("settlemint-application-access-token", "", "sm_aat_{a16}"),
    ("settlemint-personal-access-token", "", "sm_pat_{a16}"),
    ("settlemint-service-access-token", "", "sm_sat_{a16}"),
    ("shippo-api-token", "", "shippo_live_{x40}"),
    ("shopify-access-token", "", "shpat_{x32}"),
    ("shopify-custom-access-token", "", "shpca_{x32}"),
    ("shopify-private-app-access-token", "", "shppa_{x32}"),
    ("shopify-shared-secret", "", "shpss_{x32}"),
    ("sidekiq-secret", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM", "{h8}:{h8}"),
    ("sidekiq-sensitive-url", "", "https://{h8}:{h8}@gems.contribsys.com/"),
    ("slack-app-token", "", "xapp-1-A{u10}-{d13}-{h64}"),
    ("slack-bot-token", "", "xoxb-{d11}-{d12}-{a24}"),
    ("slack-config-access-token", "", "xoxe.xoxb-1-{u164}"),
    ("slack-config-refresh-token", "", "xoxe-{d1}-{u146}"),
    ("slack-legacy-bot-token", "", "xoxb-{d11}-{a22}"),
    ("slack-legacy-token", "", "xoxs-{d10}-{d10}-{d12}-{h64}"),
    ("slack-legacy-workspace-token", "", "xoxa-2-{a28}"),
    ("slack-user-token", "", "xoxp-{d11}-{d11}-{d12}-{x32}"),
    ("slack-webhook-url", "", "https://hooks.slack.com/services/T{u8}/B{u10}/{a24}"),
    ("snyk-api-token", "snyk_api_token", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("sonar-api-token", "sonar_token", "{s40}"),
    ("sourcegraph-access-token", "", "sgp_{x16}_{x40}"),
    ("square-access-token", "", "EAAA{w41}"),
    ("squarespace-access-token", "squarespace_access_token", "{h8}-{h4}-{h4}-{h4}-{h12}"),
    ("stripe-access-token", "", "sk_live_{a24}"),
    ("sumologic-access-id", "sumologic_access_id", "su{a12}"),
    ("sumologic-access-token", "sumologic_access_token", "{l64}"),
    ("telegram-bot-api-token", "telegram_bot_api_token", "{d10}:A{s34}"),
    ("travisci-access-token", "travisci_access_token", "{l22}"),
    ("twilio-api-key", "", "SK{x32}"),
    ("twitch-api-token", "twitch_api_token", "{l30}"),
    ("twitter-access-secret", "twitter_access_secret", "{l45}"),
    ("twitter-access-token", "twitter_access_token", "{d20}-{a30}"),
    ("twitter-api-key", "twitter_api_key", "{l25}"),
    ("twitter-api-secret", "twitter_api_secret", "{l50}"),
    ("twitter-bearer-token", "twitter_bearer_token", "AAAAAAAAAAAAAAAAAAAAA{a50}%3D{a40}"),
    ("typeform-api-token", "typeform_api_token", "tfp_{s59}"),
    ("vault-batch-token", "", "hvb.{w138}"),
    ("vault-service-token", "", "hvs.{w105}"),
    ("yandex-access-token", "yandex_access_token", "t1.{w1}=.{w86}="),
    ("yandex-api-key", "yandex_api_key", "AQVN{w36}"),
    ("yandex-aws-access-token", "yandex_aws_access_token", "YC{w38}"),
    ("zendesk-secret-key", "zendesk_secret_key", "{l40}"),
)


def fill(shape: str, r: random.Random) -> str:
    """A value of `shape` with random material in every slot."""
    return _SLOT.sub(lambda m: "".join(r.choice(ALPHABETS[m.group(1)]) for _ in range(int(m.group(2)))), shape)


def filler(shape: str, how: int, r: random.Random) -> str:
    """A value of `shape` as documentation writes it: every slot `x`/`0` (0), counting up (1), or
    random with EXAMPLE in its longest slot (2)."""
    if how == 0:
        return _SLOT.sub(lambda m: ("0" if m.group(1) == "d" else "x") * int(m.group(2)), shape)
    if how == 1:
        return _SLOT.sub(lambda m: (ALPHABETS[m.group(1)] * 20)[: int(m.group(2))], shape)
    longest = max(int(m.group(2)) for m in _SLOT.finditer(shape))

    def marked(m: re.Match[str]) -> str:
        size = int(m.group(2))
        if size < 8 and size < longest:
            return fill(m.group(0), r)
        return "EXAMPLE" + fill(f"{{a{size - 7}}}", r) if size > 7 else "EXAMPLE"

    return _SLOT.sub(marked, shape)


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def jwt(r: random.Random) -> str:
    claims = {"sub": str(r.randint(10**5, 10**9)), "iat": 1760000000 + r.randint(0, 10**6), "scope": "deploy"}
    return _b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url(claims) + "." + fill("{w43}", r)


def _der(tag: int, body: bytes) -> bytes:
    size = len(body)
    head = bytes((size,)) if size < 0x80 else b"\x82" + size.to_bytes(2, "big")
    return bytes((tag,)) + head + body


def pkcs12_body(r: random.Random) -> str:
    """A PKCS#12 key store's base64: SEQUENCE { INTEGER 3, SEQUENCE { data... } }."""
    inner = _der(0x30, b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x01" + _der(0xA0, _der(0x04, r.randbytes(600))))
    return base64.b64encode(_der(0x30, b"\x02\x01\x03" + inner)).decode()


def key_body(r: random.Random) -> str:
    """An RSA private key's base64 (PKCS#1: version 0, then the modulus), 64 characters a line."""
    raw = base64.b64encode(_der(0x30, b"\x02\x01\x00" + _der(0x02, b"\x00" + r.randbytes(256)) + r.randbytes(900)))
    text = raw.decode()
    return "\n".join(text[i : i + 64] for i in range(0, len(text), 64))


Builder = Callable[[random.Random, bool], str]


def _curl_auth_header(r: random.Random, real: bool) -> str:
    value = base64.b64encode(f"ci:{fill('{a18}', r)}".encode()).decode() if real else "$CI_BASIC_AUTH"
    return f'curl -sS -H "Authorization: Basic {value}" https://builds.acme-corp.dev/api/v2/queue'


def _curl_auth_user(r: random.Random, real: bool) -> str:
    return f"curl -u deploy:{fill('{a16}', r) if real else '$DEPLOY_PASSWORD'} https://nexus.acme-corp.dev/repository/"


def _freemius_secret_key(r: random.Random, real: bool) -> str:
    return f"'secret_key' => '{j('sk', '_') + fill('{a29}', r) if real else 'sk_your_secret_key_here'}',"


def _hashicorp_tf_password(r: random.Random, real: bool) -> str:
    value = fill("{a18}", r) if real else "var.sql_admin_password"
    return f'administrator_login_password = "{value}"' if real else f"administrator_login_password = {value}"


def _jwt(r: random.Random, real: bool) -> str:
    return f"staging session: {jwt(r) if real else j('eyJ', 'hbGciOiJIUzI1NiJ9', '.<payload>.<signature>')}"


def _jwt_base64(r: random.Random, real: bool) -> str:
    value = base64.b64encode(jwt(r).encode()).decode() if real else base64.b64encode(b'{"note":"no token"}').decode()
    return f"the config map holds TOKEN_B64={value}"


def _kubernetes_secret_yaml(r: random.Random, real: bool) -> str:
    value = base64.b64encode(fill("{a20}", r).encode()).decode() if real else "<base64-encoded-password>"
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {value}\n"


def _nuget_config_password(r: random.Random, real: bool) -> str:
    value = fill("{a20}", r) if real else "%NUGET_FEED_PASSWORD%"
    return f'<add key="ClearTextPassword" value="{value}" />'


def _private_key(r: random.Random, real: bool) -> str:
    return (
        pem("RSA", key_body(r))
        if real
        else f"{DASHES}BEGIN RSA PRIVATE KEY{DASHES}\n...\n{DASHES}END RSA PRIVATE KEY{DASHES}"
    )


def _pkcs12_file(r: random.Random, real: bool) -> str:
    return f"keystore.p12 as base64:\n{pkcs12_body(r)}" if real else "keystore.p12 lives in the team's password manager"


def _sentry_org_token(r: random.Random, real: bool) -> str:
    claims = {"iat": 1760000000, "url": "https://sentry.io", "region_url": "https://us.sentry.io", "org": "acme"}
    body = base64.b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return j("sntrys", "_") + body + "_" + fill("{b43}" if real else "{a0}", r) + ("" if real else "EXAMPLE")


_BUILDERS: dict[str, Builder] = {
    name.lstrip("_"): fn
    for name, fn in globals().items()
    if name.startswith("_") and callable(fn) and name[1:].replace("_", "-") in {rule for rule, _, _ in GITLEAKS_RULES}
}

# Sentences a token stands alone in, and the forms a labelled value is written in.
BARE = (
    "Rotated it this morning; the new one is {value} until the audit.",
    "Pasted from the dashboard: {value}",
    "{value} was in the old deploy notes, revoke it.",
    "Left `{value}` in the scratch file by mistake.",
)
LABELLED = ('{label} = "{value}"', "{label}: {value}", "export {LABEL}={value}", '"{label}": "{value}",')


def gitleaks_cases() -> list[Case]:
    """One positive and one hard negative a gitleaks rule."""
    out: list[Case] = []
    for index, (rule, label, shape) in enumerate(GITLEAKS_RULES):
        r = random.Random(f"gitleaks:{rule}")
        family = rule.split("-")[0]
        if shape.startswith("@"):
            build = _BUILDERS[shape[1:].replace("-", "_")]
            out.append(Case(family, rule, build(r, True), True))
            out.append(Case("negative-format", rule, build(r, False), False))
            continue
        form = LABELLED[index % len(LABELLED)] if label else BARE[index % len(BARE)]
        for secret, value in ((True, fill(shape, r)), (False, filler(shape, index % 3, r))):
            text = form.format(label=label, LABEL=label.upper(), value=value)
            out.append(Case(family if secret else "negative-format", rule, text, secret))
    return out


# --- shapes: the same secret written the ways people write it -------------------------------------------

# Assignment forms of the common languages and config formats: {n} camelCase, {N} UPPER_SNAKE,
# {k} kebab-case, {d} dotted name; {v} the value.
ASSIGNMENTS = (
    ("env", "{N}={v}"),
    ("shell-export", 'export {N}="{v}"'),
    ("shell-export-bare", "export {N}={v}"),
    ("yaml", "{n}: {v}"),
    ("yaml-quoted", "{n}: '{v}'"),
    ("yaml-block", "{n}: |\n  {v}"),
    ("json", '"{n}": "{v}"'),
    ("toml", '{n} = "{v}"'),
    ("ini", "[prod]\n{n} = {v}"),
    ("properties", "{d}={v}"),
    ("python-annotated", '{n}: str = "{v}"'),
    ("python-environ", 'os.environ["{N}"] = "{v}"'),
    ("go-short", '{n} := "{v}"'),
    ("go-var", 'var {n} string = "{v}"'),
    ("go-const", 'const {n} = "{v}"'),
    ("js-const", "const {n} = '{v}';"),
    ("js-template", "let {n} = `{v}`;"),
    ("js-object", '  {n}: "{v}",'),
    ("ts-typed", 'const {n}: string = "{v}";'),
    ("node-env", 'process.env.{N} = "{v}";'),
    ("rust", 'let {n}: &str = "{v}";'),
    ("java-field", 'private static final String {N} = "{v}";'),
    ("java-set-property", 'System.setProperty("{N}", "{v}");'),
    ("csharp-env", 'Environment.SetEnvironmentVariable("{N}", "{v}");'),
    ("kotlin", 'val {n}: String = "{v}"'),
    ("swift", 'let {n} = "{v}"'),
    ("php", '${n} = "{v}";'),
    ("php-concat", '${n} .= "{v}";'),
    ("php-array", "'{n}' => '{v}',"),
    ("ruby-hash", ':{n} => "{v}",'),
    ("ruby-env", 'ENV["{N}"] = "{v}"'),
    ("perl", "my ${n} = '{v}';"),
    ("lua", 'local {n} = "{v}"'),
    ("r", '{n} <- "{v}"'),
    ("makefile", "{N} := {v}"),
    ("makefile-posix", "{N} ::= {v}"),
    ("makefile-immediate", "{N} :::= {v}"),
    ("makefile-conditional", "{N} ?= {v}"),
    ("makefile-append", "{N} += {v}"),
    ("xml-element", "<{n}>{v}</{n}>"),
    ("xml-next-line", "<{n}>\n    {v}\n</{n}>"),
    ("xml-property", '<property name="{n}" value="{v}" />'),
    ("dotnet-add", '<add key="{N}" value="{v}" />'),
    ("dockerfile-env", "ENV {N}={v}"),
    ("dockerfile-env-space", "ENV {N} {v}"),
    ("dockerfile-arg", "ARG {N}={v}"),
    ("powershell", '$env:{N} = "{v}"'),
    ("cmd-set", "set {N}={v}"),
    ("csh-setenv", "setenv {N} {v}"),
    ("fish", "set -x {N} {v}"),
    ("cli-flag", "deploy --{k}={v}"),
    ("cli-flag-space", "deploy --{k} {v}"),
    ("jvm-property", "java -D{d}={v} -jar app.jar"),
    ("kubernetes-env", '- name: {N}\n  value: "{v}"'),
)
# (words of the name, the value's shape): what is assigned in the shapes above, in turn.
_NAMED = (
    (("api", "token"), "{a32}"),
    (("client", "secret"), "{w40}"),
    (("db", "password"), "{a12}!{d2}"),
    (("auth", "key"), "{h24}{a8}"),
    (("deploy", "token"), "{a20}{d4}"),
)
# Values that a name does not make secret: references, fillers, types.
_NOT_SECRET_VALUES = ("${{{N}}}", "changeme", "<your-{k}>", "$({N})", "your_{n}_here", "%{N}%")


def _names(parts: tuple[str, ...]) -> dict[str, str]:
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return {"n": camel, "N": "_".join(parts).upper(), "k": "-".join(parts), "d": ".".join(parts)}


def assignment_cases() -> list[Case]:
    out: list[Case] = []
    for index, (shape, form) in enumerate(ASSIGNMENTS):
        parts, value_shape = _NAMED[index % len(_NAMED)]
        names = _names(parts)
        value = fill(value_shape, random.Random(f"assignment:{shape}"))
        negative = _NOT_SECRET_VALUES[index % len(_NOT_SECRET_VALUES)].format(**names)
        out.append(Case(shape, shape, form.format(v=value, **names), True, "assignment"))
        out.append(Case("negative-assignment", shape, form.format(v=negative, **names), False, "assignment"))
    return out


def _pairs(group: str, table: tuple[tuple[str, str, str], ...]) -> list[Case]:
    """(name, positive, negative) rows; `{…}` slots in either are filled from the row's seed."""
    out: list[Case] = []
    for name, positive, negative in table:
        r = random.Random(f"{group}:{name}")
        out.append(Case(name, name, fill(positive, r), True, group))
        out.append(Case("negative-" + group, name, fill(negative, r), False, group))
    return out


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# Short and digits-only credentials where the label leaves no doubt, beside numbers that are settings.
LABELLED_SHORT = (
    ("password-digits", 'db_password = "{d8}"', "password_min_length = 12"),
    ("sudo-password-digits", "sudo password: 7{d6}", "password expiry: 90 days"),
    ("pin", "SIM PIN: 4{d3}", "PIN length: 4 digits"),
    ("pin-assignment", 'pin = "{d6}"', "pin_attempts = 3"),
    ("passcode", "door passcode: {d6}", "passcode screen timeout: 30"),
    ("api-key-short", 'api_key = "{a5}7{a2}"', "api_key_version = 3"),
    ("secret-short", 'secret: "Kd8#{a4}"', "secret_count: 4"),
    ("token-short", "TOKEN={a6}9", "TOKEN_TTL=3600"),
    ("wifi-password", "wifi password: {d10}", "wifi channel: 11"),
    ("otp-secret", "otp_secret: {B16}", "otp_digits: 6"),
    ("smtp-password", "SMTP_PASSWORD=Tr0{a6}", "SMTP_PORT=587"),
    ("vpn-pin", "vpn pin = {d6}", "vpn port = 1194"),
    ("pgp-passphrase", 'GPG_PASSPHRASE="{a9}3"', 'GPG_KEY_ID="0x{H16}"'),
    ("router-password", "router admin password is {d9}", "router admin password is printed on the label"),
)


# Encoded forms: base64 text that decodes to a token or a key.
def _encoded() -> tuple[tuple[str, str, str], ...]:
    r = random.Random("encoded")
    token = jwt(r)
    key = pem("RSA", key_body(r))
    openssh = pem("OPENSSH", "b3BlbnNzaC1rZXktdjEAAAAA" + fill("{b200}", r))
    public = f"{DASHES}BEGIN PUBLIC KEY{DASHES}\n" + fill("{b64}", r) + f"\n{DASHES}END PUBLIC KEY{DASHES}"
    plain = '{"name":"acme","replicas":3,"region":"eu-west-1","features":["a","b"]}'
    url_safe = base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    return (
        ("base64-jwt", f"SESSION_B64={_b64(token)}", f"SESSION_B64={_b64(plain)}"),
        ("base64-jwt-yaml", f"  token: {_b64(token)}", f"  settings: {_b64(plain)}"),
        ("base64url-jwt", f"cookie value {url_safe}", f"cookie value {_b64('theme=dark; lang=en-GB; tz=UTC')}"),
        ("base64-private-key", f"KEY_B64={_b64(key)}", f"KEY_B64={_b64(public)}"),
        ("base64-openssh-key", f"deploy key (base64): {_b64(openssh)}", f"known hosts (base64): {_b64(plain)}"),
        (
            "base64-jwt-in-json",
            f'{{"auth": "{_b64(token)}"}}'.replace('"auth"', '"blob"'),
            f'{{"blob": "{_b64(plain)}"}}',
        ),
    )


# curl and HTTP header forms.
HEADERS = (
    (
        "curl-user",
        "curl -u admin:{a14} https://ci.acme-corp.dev/api",
        'curl -u "$CI_USER:$CI_PASSWORD" https://ci.acme-corp.dev/api',
    ),
    (
        "curl-user-long",
        "curl --user deploy:{a16} -X POST https://ci.acme-corp.dev/hook",
        "curl --user deploy https://ci.acme-corp.dev/hook",
    ),
    (
        "curl-bearer",
        "curl -H 'Authorization: Bearer {a40}' https://api.acme-corp.dev/v1/me",
        'curl -H "Authorization: Bearer $API_TOKEN" https://api.acme-corp.dev/v1/me',
    ),
    (
        "curl-token-scheme",
        'curl -H "Authorization: token {h40}" https://git.acme-corp.dev/api/v3/user',
        'curl -H "Authorization: token ${GIT_TOKEN}" https://git.acme-corp.dev/api/v3/user',
    ),
    (
        "curl-api-key-header",
        'curl -H "X-API-Key: {a32}" https://api.acme-corp.dev/v2/items',
        "curl -H 'Content-Type: application/json' https://api.acme-corp.dev/v2/items",
    ),
    (
        "curl-private-token",
        'curl --header "PRIVATE-TOKEN: {a26}" https://gitlab.acme-corp.dev/api/v4/projects',
        'curl --header "PRIVATE-TOKEN: <your_access_token>" https://gitlab.acme-corp.dev/api/v4/projects',
    ),
    (
        "http-authorization",
        "GET /v1/orders HTTP/1.1\nHost: api.acme-corp.dev\nAuthorization: Bearer {w48}",
        "GET /v1/orders HTTP/1.1\nHost: api.acme-corp.dev\nAuthorization: Bearer <token>",
    ),
    (
        "http-bearer-zero-run",
        "Authorization: Bearer AAAAAAAAAAAAAAAAAAAAA{a10}AAAAAAA{a6}%2B{a30}%3D{a40}",
        "Authorization: Bearer %BEARER_TOKEN%",
    ),
    ("http-x-auth-token", "X-Auth-Token: {a36}", "X-Auth-Token: (see the team vault)"),
    ("http-api-key", "api-key: {h32}", "api-key: required"),
    (
        "http-proxy-authorization",
        "Proxy-Authorization: Basic " + _b64("proxy:Zq8{a10}"),
        "Proxy-Authorization: Basic <credentials>",
    ),
    (
        "wget-header",
        'wget --header="Authorization: Bearer {a44}" https://dl.acme-corp.dev/build.tar.gz',
        'wget --header="Accept: application/octet-stream" https://dl.acme-corp.dev/build.tar.gz',
    ),
    (
        "httpie",
        "http GET api.acme-corp.dev/me Authorization:'Bearer {a40}'",
        "http GET api.acme-corp.dev/me Accept:application/json",
    ),
)

# Passwords and passphrases written in sentences.
PROSE = (
    (
        "passphrase-words",
        "The backup passphrase is maple otter cobalt quartz falcon.",
        "The backup passphrase is in the safe, not in this note.",
    ),
    (
        "password-is",
        "The NAS password is Hx7{a6}2 since the reset.",
        "The NAS password is stored in the team manager since the reset.",
    ),
    ("password-quoted", 'wifi password: "{a10}"', "wifi password: ask at the front desk"),
    ("password-for", "password for the staging db is q{a9}7", "password for the staging db is rotated every month"),
    ("use-password", "log in with password Zx9{a7} for now", "log in with the password from onboarding"),
    ("temporary-password", "temporary password: Welcome{d4}!", "temporary passwords expire after 24 hours"),
    ("changed-password", "changed the root password to R{a8}4", "changed the root password policy to 16 characters"),
    (
        "passphrase-hyphen",
        "gpg passphrase — lantern-meadow-pepper-violet-ember",
        "gpg passphrase — see the recovery sheet",
    ),
    ("password-was", "`Pq{a8}3` was the old router password", "the old router password was weak"),
    ("pin-prose", "my bank PIN is {d4}2", "my bank PIN is never written down"),
)

# Older formats of families whose prefix or shape changed, under the label people give them.
LEGACY = (
    ("vault-legacy-token", "VAULT_TOKEN=s.{a24}", "VAULT_TOKEN=s.xxxxxxxxxxxxxxxxxxxxxxxx"),
    ("gitlab-legacy-token", "GITLAB_TOKEN={w20}", "GITLAB_TOKEN=${CI_JOB_TOKEN}"),
    ("github-legacy-token", "GITHUB_TOKEN={h40}", "GITHUB_SHA={h40}"),
    (
        "npm-legacy-token",
        "//registry.npmjs.org/:_authToken={h8}-{h4}-4{h3}-a{h3}-{h12}",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    ),
    ("heroku-legacy-key", "HEROKU_API_KEY={h8}-{h4}-4{h3}-b{h3}-{h12}", "HEROKU_APP_ID={h8}-{h4}-4{h3}-b{h3}-{h12}"),
    ("openai-legacy-key", "OPENAI_API_KEY=" + j("sk", "-") + "{a48}", "OPENAI_API_KEY=" + j("sk", "-") + "..."),
    (
        "slack-legacy-token",
        "slack token " + j("xo", "xp-") + "{d11}-{d11}-{d12}-{h32}",
        "slack token " + j("xo", "xp-") + "your-token",
    ),
    ("sentry-legacy-token", "SENTRY_AUTH_TOKEN={h64}", "SENTRY_RELEASE={h40}"),
    ("twilio-auth-token", "TWILIO_AUTH_TOKEN={h32}", "TWILIO_REGION=ie1"),
    ("stripe-legacy-key", "stripe key " + j("sk", "_live_") + "{a24}", "stripe key " + j("pk", "_live_") + "{a24}"),
    ("aws-secret-key", "aws_secret_access_key = {b40}", "aws_session_expiry = 2026-12-02T03:00:00Z"),
    ("docker-legacy-auth", '"auth": "' + _b64("deploy:Qm7{a10}") + '"', '"auth": ""'),
)

SHAPED_GROUPS = ("assignment", "labelled", "encoded", "header", "prose", "legacy")


# --- hard negatives: text that looks like a secret and is none ------------------------------------------


def _uuid(r: random.Random) -> str:
    return fill("{h8}-{h4}-4{h3}-8{h3}-{h12}", r)


def _png(r: random.Random) -> str:
    return base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + r.randbytes(180)).decode()


# (kind, template): every template is filled with fresh random material for each of its copies.
NEGATIVE_TEMPLATES = (
    ("commit-hash", "Fixed in commit {h40}."),
    ("commit-hash", "git cherry-pick {h7} && git push"),
    ("commit-hash", "commit_sha: {h40}"),
    ("commit-hash", "GIT_COMMIT={h40}"),
    ("commit-hash", "merged {h12} into main after review"),
    ("uuid", "request id @uuid failed with 502"),
    ("uuid", 'trace_id = "@uuid"'),
    ("uuid", "tenant: @uuid"),
    ("uuid", "correlation-id: @uuid"),
    ("digest", "docker pull registry.acme-corp.dev/api@sha256:{h64}"),
    ("digest", "checksum: {h64}"),
    ("digest", "md5 of the export: {h32}"),
    ("digest", 'etag: "{h32}"'),
    ("digest", "sha1sum build.tar.gz -> {h40}"),
    ("lockfile", "  integrity sha512-{b86}=="),
    ("lockfile", '      "integrity": "sha512-{b86}==",'),
    ("lockfile", 'hash = "sha256:{h64}"'),
    ("lockfile", "golang.org/x/net v0.31.0 h1:{b43}="),
    ("lockfile", 'checksum = "{h64}"'),
    ("base64-image", "![diagram](data:image/png;base64,@png)"),
    ("base64-image", "background: url(data:image/png;base64,@png);"),
    ("version", "upgraded node to 20.{d2}.1 and python to 3.12.{d1}"),
    ("version", "version: 2.{d2}.0-rc.1+build.{d3}"),
    ("version", "api_version = 2024-06-01"),
    ("version", "key_version: {d2}"),
    ("example", "aws_access_key_id = " + j("AKIA", "IOSFODNN7", "EXAMPLE")),
    ("example", "api_key: EXAMPLE{a24}"),
    ("example", 'token = "{a8}EXAMPLE{a8}"'),
    ("example", "client_secret: your-client-secret-here"),
    ("public-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b43} me@laptop"),
    ("identifier", "build_id: {d10}"),
    ("identifier", "order number {d12} shipped"),
)
PASSWORD_PROSE = (
    "Reset your password from the settings page.",
    "The password must be at least 12 characters long.",
    "Passwords are stored as argon2id hashes, never in plain text.",
    "We rotated the database password on Monday.",
    "password: see 1Password, entry 'staging db'",
    "The token is stored in the macOS keychain.",
    "API key rotation is due next week.",
    "Never paste secrets into notes; use the vault.",
    "Pass the token to the client in the Authorization header.",
    "The secret santa list is in the shared drive.",
    "Key points: latency, cost, and the migration plan.",
    "The password field is required on the signup form.",
    "If you forget the passphrase, the backup cannot be restored.",
    "Tokens expire after one hour and are refreshed silently.",
    "Credentials for the test account are handed out by the on-call lead.",
    "password reset emails were delayed by the queue backlog",
    "The key rotation script lives in ops/rotate.sh.",
    "We agreed on passphrases of at least five words.",
    "Use a password manager; do not reuse passwords.",
    "the secret is to warm the cache before the benchmark",
)
NEGATIVE_COPIES = 4


def negative_cases() -> list[Case]:
    out: list[Case] = []
    for index, (kind, template) in enumerate(NEGATIVE_TEMPLATES):
        for copy in range(NEGATIVE_COPIES):
            r = random.Random(f"negative:{index}:{copy}")
            text = fill(template, r).replace("@uuid", _uuid(r)).replace("@png", _png(r))
            out.append(Case("negative-" + kind, kind, text, False, "negatives"))
    out.extend(Case("negative-prose", "password-prose", text, False, "negatives") for text in PASSWORD_PROSE)
    return out


def all_cases() -> list[Case]:
    """The whole corpus: gitleaks' rules, the shapes, and the hard negatives."""
    return [
        *gitleaks_cases(),
        *assignment_cases(),
        *_pairs("labelled", LABELLED_SHORT),
        *_pairs("encoded", _encoded()),
        *_pairs("header", HEADERS),
        *_pairs("prose", PROSE),
        *_pairs("legacy", LEGACY),
        *negative_cases(),
    ]
