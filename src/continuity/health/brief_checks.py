"""Doctor's checks of what a session start reads besides the hot sources: the policy files, the
rendered briefs against their ceilings for both events and harnesses, and the handoff set.

Each renders or selects exactly as the hook does (`render.render`, `handoff.select`), over the sources
doctor gathered once (`Context`), so doctor and the brief never disagree.
"""

from __future__ import annotations

from continuity import limits, tunables
from continuity.brief import render, sources
from continuity.errors import NoteError
from continuity.health.context import Context
from continuity.health.report import Check, check, described, names
from continuity.memory import handoff
from continuity.names import HARNESSES, SESSION_START, SUBAGENT_START
from continuity.vault import notes, scan


def policy_checks(ctx: Context) -> list[Check]:
    """INDEX.md and MEMORY_POLICY.md: present, within their cap, no secret, frontmatter that parses."""
    out: list[Check] = []
    for raw in ctx.gathered.policy:
        ident = "policy." + raw.rel.rpartition("/")[2].removesuffix(".md").lower()
        if raw.error is not None and raw.error.reason == "missing":
            out.append(check(ident, "warn", f"{raw.rel} is missing; copy it from vault-template/{raw.rel}"))
            continue
        found = sources.policy_notices(ctx.gathered._replace(policy=(raw,)))
        if found:
            out.append(check(ident, "error", "; ".join(found)))
            continue
        assert raw.data is not None
        try:
            notes.parse_note(raw.data, raw.rel, require_frontmatter=False)
        except NoteError as exc:
            out.append(check(ident, "warn", f"{exc}; fix the frontmatter block"))
            continue
        out.append(check(ident, "ok", f"{raw.rel}: {raw.size or 0:,} bytes, no secrets (checked, never in the brief)"))
    return out


def session_brief(ctx: Context) -> list[Check]:
    """The session start's brief, as each harness would get it."""
    extra = [*ctx.policy_notices, *scan.notices(ctx.scan)]
    return [_brief_check(SESSION_START, ctx.views, extra)]


def subagent_brief(ctx: Context) -> list[Check]:
    """A subagent start's brief, gathered for its own event."""
    gathered = sources.gather(ctx.root, ctx.conn.project, ctx.conn.device, SUBAGENT_START)
    views, notices = sources.validate(gathered)
    return [_brief_check(SUBAGENT_START, views, [*notices, *scan.notices(ctx.scan)])]


def _brief_check(event: str, views: list[render.SourceView], extra: list[str]) -> Check:
    briefs = {harness: render.render(event, harness, views, extra) for harness in HARNESSES}
    codex = briefs["codex"]
    codex_limit = (
        tunables.CODEX_SESSION_START_CONTEXT_LIMIT_TOKENS
        if event == SESSION_START
        else tunables.CODEX_SUBAGENT_START_CONTEXT_LIMIT_TOKENS
    )
    message = (
        f"{codex.bytes:,} bytes of {codex.ceiling_bytes:,}, {codex.chars:,} characters, about "
        f"{codex.tokens_estimate:,} tokens (target {tunables.BRIEF_TARGET_TOKENS:,}; Codex limit "
        f"{codex_limit:,} tokens, Claude Code limit {limits.CLAUDE_CONTEXT_LIMIT_CHARS:,} characters); "
        f"status {codex.status}"
    )
    cut = [f"{s.name} ({harness})" for harness, brief in briefs.items() for s in brief.sources if s.reason == "ceiling"]
    if cut:
        return check(
            f"brief.{event}",
            "error",
            f"{message}; left out to fit the ceiling: {', '.join(cut)}; shorten their ## Brief sections",
        )
    if codex.tokens_estimate > tunables.BRIEF_TARGET_TOKENS or codex.tokens_estimate > codex_limit:
        return check(
            f"brief.{event}",
            "warn",
            f"{message}; above the target: shorten the ## Brief sections (ceilings are limits, not quotas)",
        )
    return check(f"brief.{event}", "ok", message)


def handoff_checks(ctx: Context) -> list[Check]:
    """Several current handoffs (only the newest loads) and handoffs that cannot be loaded."""
    project = ctx.conn.project
    selection = handoff.select(list(ctx.gathered.handoffs), project)
    current = selection.current
    out: list[Check] = []
    if len(current) > 1:
        assert selection.chosen is not None
        out.append(
            check(
                "handoffs",
                "warn",
                f"{len(current)} current handoffs for project {project!r}: {names([h.rel for h in current])}; "
                f"only the newest is loaded: keep one, and for each other run 'lifecycle supersede ID --by "
                f"{selection.chosen.rel.rpartition('/')[2].removesuffix('.md').lower()}'",
            )
        )
    elif current:
        out.append(check("handoffs", "ok", f"one current handoff for project {project!r}: {current[0].rel}"))
    else:
        out.append(check("handoffs", "ok", f"no current handoff for project {project!r}"))
    if selection.invalid:
        count = len(selection.invalid)
        message = f"{count} handoff(s) cannot be loaded: {described(selection.invalid)}"
        out.append(check("handoffs.invalid", "warn", message))
    return out
