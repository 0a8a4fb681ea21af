"""Optional notifications through Apprise (installed with Prefect): a failed audit, a night with high findings.

``PITAUDIT_NOTIFY_URL`` holds one Apprise URL (``mailto://...``, ``slack://...``, ``json://host/path``, ...);
unset, nothing is sent. A notification that cannot be delivered is logged, never raised: it must not turn a
finished audit into a failed one.
"""

from __future__ import annotations

import logging

log = logging.getLogger("pitaudit.notify")


def _warn(text: str) -> None:
    """A notification that did not go is said on stderr (one line; the run's status does not change) and in the run's
    log: logged only, it reached no one, and the operator learned of it by missing a night's alert."""
    import sys

    log.warning(text)
    print(f"pitaudit: warning: {text}", file=sys.stderr, flush=True)


def send(url: str | None, title: str, body: str) -> bool:
    """Send one message to ``url``; False when unset or undeliverable (then a warning, :func:`_warn`). The URL is
    never repeated (it may hold a password): its scheme names it."""
    if not url:
        return False
    scheme = url.split("://", 1)[0] if "://" in url else "?"
    try:
        import apprise

        sender = apprise.Apprise()
        if not sender.add(url):
            _warn(f"PITAUDIT_NOTIFY_URL ({scheme}://...) is not a URL Apprise understands; no notification sent")
            return False
        if sender.notify(title=title, body=body):
            return True
        _warn(f"the notification to PITAUDIT_NOTIFY_URL ({scheme}://...) could not be delivered: {title}")
        return False
    except Exception as exc:  # noqa: BLE001 - a notification never fails the audit
        _warn(f"the notification to PITAUDIT_NOTIFY_URL ({scheme}://...) could not be sent: "
              f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}")
        return False


def notify_high_findings(outcome, settings) -> bool:
    """Tell the operator when the night has high-severity findings (money)."""
    f = outcome.findings
    high = int((f["severity"] == "high").sum()) if f.height else 0
    if not high or not settings.notify_url:
        return False
    from pipelines.audit.artifacts import summary_markdown

    return send(settings.notify_url, f"pitaudit {outcome.scope.label()}: {high:,} high-severity finding(s)",
                summary_markdown(outcome))


def notify_failure(flow_run, state) -> bool:
    """The flow's ``on_failure`` / ``on_crashed`` hook: the run's name and the one-line reason."""
    try:
        from pipelines.settings import load_settings

        url = load_settings().notify_url
    except Exception:  # noqa: BLE001 - a malformed setting already failed the run; nothing more to send
        return False
    message = (state.message or "").strip().splitlines()
    return send(url, f"pitaudit: {flow_run.name} failed", message[0] if message else str(state.type))
