"""Token formats: the prefixes and shapes of the credentials that services issue.

Token formats follow the public rule sets of gitleaks and trufflehog. Each rule names literal
prefixes that every match contains; its expression runs only when one of them occurs. The prefixes
are not searched in the whole note but in its "runs": stretches of at least 16 token characters
(letters, digits, `_-.+/=~:%`). Every token lies inside one run, and prose has few runs, so a clean
note costs one regex pass and a few substring searches on a short string. Expressions start with
their literal prefix and use bounded repetition, so the worst case stays linear in the input.

Where a format carries a checksum (GitHub's and npm's CRC32 in base62) a valid one is accepted
outright; any other body must look random (`shapes`), which turns away `ghp_xxxx…` fillers and
sequential examples.
"""

from __future__ import annotations

import re

from continuity.gate import shapes

# --- token formats -----------------------------------------------------------------------------------


def _check(token: str, how: str) -> bool:
    """Validate a match. `how`: "" none, "crc" checksum or random, "tail" random last segment,
    "aws" no documentation key, "jwt" a JSON header, or "N" / "N:M" random after N characters
    (at least M long, 16 by default)."""
    if not how:
        return True
    if how == "crc":
        return shapes.crc32_base62_ok(token[4:]) or shapes.looks_random(token[4:])
    if how == "tail":
        return shapes.looks_random(max(re.split(r"[._:\-]", token), key=len), 12)
    if how == "aws":
        return (
            "EXAMPLE" not in token.upper() and not shapes.is_sequential(token[4:]) and not shapes.is_placeholder(token)
        )
    if how == "jwt":
        return _jwt_ok(token)
    offset, _, least = how.partition(":")
    return shapes.looks_random(token[int(offset) :], int(least or 16))


def _jwt_ok(token: str) -> bool:
    """A JSON Web Token: a base64url JSON header with `alg`, and a signature."""
    import base64

    parts = token.split(".")
    if len(parts) < 3 or len(parts[2]) < 16:
        return False
    try:
        decoded = base64.urlsafe_b64decode((parts[0] + "=" * (-len(parts[0]) % 4)).encode("ascii"))
    except ValueError:
        return False
    return decoded.lstrip().startswith(b"{") and b'"alg"' in decoded.replace(b" ", b"")


# (detector, prefixes, expression, check, bounds). Bounds: "L" the match must not follow a word
# character, "R" a fixed-length format must not run on into more word characters.
RULES: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = tuple(
    (detector, tuple(prefixes.split()), pattern, check, bounds)
    for detector, prefixes, pattern, check, bounds in (
        ("github-token", "ghp_ gho_ ghu_ ghs_ ghr_", r"gh[pousr]_[A-Za-z0-9]{36}", "crc", "L"),
        ("github-fine-grained-token", "github_pat_", r"github_pat_[A-Za-z0-9_]{40,255}", "11:30", ""),
        (
            "gitlab-token",
            "glpat- gldt- glrt- glptt- glsoat- glft- glimt- glcbt- gloas- glagent-",
            r"gl(?:pat|dt|rt|ptt|soat|ft|imt|cbt|oas|agent)-[A-Za-z0-9_.\-]{20,200}",
            "tail",
            "L",
        ),
        ("gitlab-runner-token", "GR1348941", r"GR1348941[A-Za-z0-9_\-]{20,}", "9", ""),
        ("aws-access-key-id", "AKIA ASIA ABIA ACCA", r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}", "aws", "LR"),
        ("anthropic-api-key", "sk-ant-", r"sk-ant-[A-Za-z0-9_\-]{32,300}", "7:24", ""),
        (
            "openai-api-key",
            "sk-proj- sk-svcacct- sk-admin- sk-None-",
            r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{32,300}",
            "tail",
            "",
        ),
        ("openai-api-key", "T3BlbkFJ", r"sk-[A-Za-z0-9_\-]{10,80}T3BlbkFJ[A-Za-z0-9_\-]{10,80}", "", ""),
        ("sk-api-key", "sk-", r"sk-[A-Za-z0-9]{32,128}", "3:32", "L"),
        ("google-api-key", "AIza", r"AIza[0-9A-Za-z_\-]{35}", "4:30", "LR"),
        ("google-oauth-client-secret", "GOCSPX-", r"GOCSPX-[A-Za-z0-9_\-]{24,40}", "7", ""),
        ("google-oauth-token", "ya29.", r"ya29\.[0-9A-Za-z_\-]{30,}", "5:24", ""),
        ("google-oauth-token", "1//0", r"1//0[0-9A-Za-z_\-]{40,}", "4:30", "L"),
        ("huggingface-token", "hf_", r"hf_[A-Za-z0-9]{30,40}", "3:30", "L"),
        ("huggingface-token", "api_org_", r"api_org_[A-Za-z0-9]{30,40}", "8:30", ""),
        ("npm-token", "npm_", r"npm_[A-Za-z0-9]{36}", "crc", "L"),
        ("pypi-token", "pypi-AgE", r"pypi-AgE[A-Za-z0-9_\-]{50,}", "", ""),
        ("vault-token", "hvs. hvb. hvr.", r"hv[sbr]\.[A-Za-z0-9_\-]{24,400}", "4:24", "L"),
        ("digitalocean-token", "dop_v1_ doo_v1_ dor_v1_", r"do[opr]_v1_[a-fA-F0-9]{64}", "7:64", "R"),
        ("databricks-token", "dapi", r"dapi[a-zA-Z0-9]{32}(?:-[0-9])?", "4:32", "LR"),
        (
            "doppler-token",
            "dp.pt. dp.st. dp.ct. dp.sa. dp.scim. dp.audit.",
            r"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,64}",
            "tail",
            "",
        ),
        ("grafana-cloud-token", "glc_", r"glc_[A-Za-z0-9+/]{32,400}={0,2}", "4:32", ""),
        ("grafana-service-account-token", "glsa_", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "5:32", ""),
        ("grafana-api-key", "eyJrIjoi", r"eyJrIjoi[A-Za-z0-9+/]{60,400}={0,2}", "", ""),
        ("notion-token", "ntn_", r"ntn_[A-Za-z0-9]{40,50}", "4:40", "LR"),
        ("notion-token", "secret_", r"secret_[A-Za-z0-9]{43}", "7:43", "LR"),
        ("pulumi-token", "pul-", r"pul-[a-zA-Z0-9]{40}", "4:40", "LR"),
        ("sentry-token", "sntrys_eyJ", r"sntrys_eyJ[A-Za-z0-9+/=_\-]{50,}", "", ""),
        ("sentry-token", "sntryu_", r"sntryu_[a-zA-Z0-9]{64}", "7:64", "R"),
        ("shopify-token", "shpat_ shpca_ shppa_ shpss_", r"shp(?:at|ca|pa|ss)_[a-zA-Z0-9]{32}", "6:32", "R"),
        ("mailgun-key", "key-", r"key-[a-zA-Z0-9]{32}", "4:32", "LR"),
        ("terraform-cloud-token", ".atlasv1.", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,100}", "", "L"),
        ("azure-ad-client-secret", "Q~", r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}", "5:24", "L"),
        ("telegram-bot-token", ":AA", r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}", "tail", "R"),
        ("mailchimp-key", "-us", r"[0-9a-f]{32}-us[0-9]{1,2}", "", "LR"),
        ("azure-sas-token", "sig=", r"sig=[A-Za-z0-9%+/]{40,120}={0,2}", "4:30", "L"),
        ("azure-storage-key", "AccountKey=", r"AccountKey=[A-Za-z0-9+/]{80,90}={0,2}", "", ""),
        (
            "slack-token",
            "xoxb- xoxp- xoxa- xoxo- xoxs- xoxr- xoxe- xoxe.",
            r"xox(?:[abposr]|e\.xox[bp]|e)-[A-Za-z0-9\-]{20,250}",
            "tail",
            "",
        ),
        ("slack-app-token", "xapp-", r"xapp-[A-Za-z0-9\-]{20,250}", "tail", ""),
        (
            "slack-webhook",
            "hooks.slack.com/",
            r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,120}",
            "tail",
            "",
        ),
        (
            "discord-webhook",
            "/api/webhooks/",
            r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_\-]{30,}",
            "tail",
            "",
        ),
        (
            "stripe-secret-key",
            "sk_live_ sk_test_ rk_live_ rk_test_",
            r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,247}",
            "8:20",
            "",
        ),
        ("stripe-webhook-secret", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}", "6:24", ""),
        ("sendgrid-api-key", "SG.", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", "tail", ""),
        ("twilio-api-key", "SK", r"SK[0-9a-zA-Z]{32}", "2:32", "LR"),
        ("square-token", "sq0atp- sq0csp-", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}", "7:22", ""),
        ("square-token", "EAAA", r"EAAA[A-Za-z0-9_+\-]{60}", "4:60", "LR"),
        ("facebook-access-token", "EAA", r"EAA[A-Za-z0-9]{90,400}", "3:90", "L"),
        ("linear-api-key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}", "8:40", "R"),
        ("postman-api-key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", "tail", ""),
        ("atlassian-api-token", "ATATT3", r"ATATT3[A-Za-z0-9_=\-]{150,300}", "6:100", "L"),
        ("newrelic-key", "NRAK- NRJS- NRII-", r"NR(?:AK|JS|II)-[A-Za-z0-9]{20,40}", "5:20", ""),
        ("dynatrace-token", "dt0c01.", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "tail", ""),
        ("heroku-api-key", "HRKU-", r"HRKU-[A-Za-z0-9_\-]{20,}", "5:20", ""),
        ("flyio-token", "fo1_", r"fo1_[A-Za-z0-9_\-]{39,50}", "4:39", ""),
        ("flyio-token", "fm1a_ fm1r_ fm2_", r"fm[12][ar]?_[A-Za-z0-9+/=_\-]{60,}", "", "L"),
        ("age-secret-key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "", ""),
        ("onepassword-token", "ops_eyJ", r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}", "", ""),
        (
            "onepassword-secret-key",
            "A3-",
            r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
            "",
            "L",
        ),
        ("cloudflare-origin-ca-key", "v1.0-", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "", ""),
        ("alibaba-access-key", "LTAI", r"LTAI[A-Za-z0-9]{12,20}", "4:12", "L"),
        ("brevo-api-key", "xkeysib- xsmtpsib-", r"x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "", ""),
        ("figma-token", "figd_", r"figd_[A-Za-z0-9_\-]{40}", "5:32", ""),
        ("airtable-token", "pat", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "", "L"),
        ("supabase-token", "sbp_", r"sbp_[a-zA-Z0-9]{40}", "4:40", "R"),
        ("supabase-token", "sb_secret_", r"sb_secret_[A-Za-z0-9_\-]{20,}", "10:20", ""),
        ("replicate-token", "r8_", r"r8_[A-Za-z0-9]{37}", "3:30", "LR"),
        ("groq-api-key", "gsk_", r"gsk_[A-Za-z0-9]{48,52}", "4:40", ""),
        ("xai-api-key", "xai-", r"xai-[A-Za-z0-9]{70,90}", "4:60", ""),
        ("perplexity-api-key", "pplx-", r"pplx-[A-Za-z0-9]{40,56}", "5:40", ""),
        ("langsmith-key", "lsv2_", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "", ""),
        ("docker-hub-token", "dckr_pat_", r"dckr_pat_[A-Za-z0-9_\-]{27,}", "9:20", ""),
        ("mapbox-secret-token", "sk.eyJ", r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}", "", ""),
        ("rubygems-key", "rubygems_", r"rubygems_[a-f0-9]{48}", "", "R"),
        (
            "tailscale-key",
            "tskey-",
            r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
            "tail",
            "",
        ),
        ("buildkite-token", "bkua_", r"bkua_[a-f0-9]{40}", "", "R"),
        ("prefect-key", "pnu_", r"pnu_[A-Za-z0-9]{36}", "4:30", "LR"),
        (
            "planetscale-token",
            "pscale_tkn_ pscale_pw_ pscale_oauth_",
            r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=\-]{32,64}",
            "tail",
            "",
        ),
        ("render-api-key", "rnd_", r"rnd_[A-Za-z0-9]{32}", "4:32", "LR"),
        ("pinecone-key", "pcsk_", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}", "tail", ""),
        ("clojars-token", "CLOJARS_", r"CLOJARS_[a-z0-9]{60}", "", ""),
        ("adafruit-key", "aio_", r"aio_[A-Za-z0-9]{28}", "4:28", "LR"),
        ("shippo-token", "shippo_live_ shippo_test_", r"shippo_(?:live|test)_[a-f0-9]{40}", "", ""),
        ("duffel-token", "duffel_live_ duffel_test_", r"duffel_(?:live|test)_[A-Za-z0-9_=\-]{43}", "", ""),
        ("easypost-key", "EZAK EZTK", r"EZ[AT]K[A-Za-z0-9]{54}", "", "L"),
        ("flutterwave-key", "FLWSECK", r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X", "", ""),
        ("typeform-token", "tfp_", r"tfp_[A-Za-z0-9_.=\-]{59}", "", ""),
        ("circleci-token", "CCIPAT_", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", "", ""),
        ("jwt", "eyJ", r"eyJ[A-Za-z0-9_\-]{8,2000}\.eyJ[A-Za-z0-9_\-]{8,8000}\.[A-Za-z0-9_\-]{16,2000}", "jwt", "L"),
    )
)

# Every token above consists of these characters and is at least this long.
RUN = r"(?<![A-Za-z0-9_\-.+/=~:%])[A-Za-z0-9_\-.+/=~:%]{16,}"


def runs(text: str) -> str:
    """The note's token-character runs, joined: where any token prefix must occur."""
    return "\n".join(shapes.compiled(RUN).findall(text))


def token_candidates(text: str, haystack: str | None = None) -> list[tuple[int, str, str]]:
    """(offset, detector, value) for every token-format match that passes its check (`haystack`: the runs)."""
    haystack = runs(text) if haystack is None else haystack
    out: list[tuple[int, str, str]] = []
    if not haystack:
        return out
    size = len(text)
    for detector, prefixes, pattern, check, bounds in RULES:
        if not any(prefix in haystack for prefix in prefixes):
            continue
        for match in shapes.compiled(pattern).finditer(text):
            start, end = match.span()
            if "L" in bounds and start > 0 and text[start - 1] in shapes.WORD_CHARS:
                continue
            if "R" in bounds and end < size and text[end] in shapes.WORD_CHARS:
                continue
            token = match.group(0)
            if _check(token, check):
                out.append((start, detector, token))
    return out
