"""OpenTelemetry spans for runs: one per run, per step and per host call.

:class:`OtelObserver` reads the same events as :class:`flowc.hosts.trace.Tracer`
(``ObservedHost(host, OtelObserver())``) and turns them into spans on the
OpenTelemetry API's tracer (``flowc`` from the global provider unless one
is given): ``flowc.run`` around ``flowc.step <id>`` spans around
``flowc.call <capability>:<name>`` and ``flowc.sleep`` spans. Failed steps
and calls get an error status with the message; what a span carries is
cut and redacted as a trace is (no arguments or results). Exporting is
the application's: configure a tracer provider and exporter with the
OpenTelemetry SDK. Needs the ``otel`` extra (``opentelemetry-api``).
"""

from __future__ import annotations

from typing import Any

from flowc.hosts.trace import environment_secrets, redacted, scrubbed
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

_CALL_STATUS = {"result": "ok", "error": "error", "thrown": "failure", "timeout": "timeout"}


class OtelObserver:
    """Spans from a run's events (an observer of :class:`ObservedHost`)."""

    def __init__(self, tracer: trace.Tracer | None = None, workflow: str | None = None,
                 max_chars: int = 200) -> None:
        self.tracer = tracer or trace.get_tracer("flowc")
        self.workflow = workflow
        self.max_chars = max_chars
        self.secrets = environment_secrets()
        self.run_span: trace.Span | None = None
        self.steps: dict[str, list[trace.Span]] = {}
        self.open_steps: list[str] = []
        self.calls: dict[int, tuple[Any, str | None, trace.Span | None]] = {}

    def __call__(self, event: tuple) -> None:
        handler = getattr(self, "_on_" + event[0], None)
        if handler is not None:
            handler(*event[1:])

    def _text(self, value: Any) -> str:
        return scrubbed(str(redacted(str(value), self.max_chars)), self.secrets)

    def _child(self, name: str, parent: trace.Span | None, attributes: dict) -> trace.Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=context, attributes=attributes)

    # ------------------------------------------------------------ events
    def _on_run_start(self, run: Any) -> None:
        attributes = {"flowc.workflow": self.workflow} if self.workflow else {}
        self.run_span = self.tracer.start_span("flowc.run", attributes=attributes)

    def _on_step_start(self, step: str) -> None:
        span = self._child(f"flowc.step {step}", self.run_span, {"flowc.step": step})
        self.steps.setdefault(step, []).append(span)
        self.open_steps.append(step)

    def _on_step_end(self, step: str, status: str, detail: Any = None) -> None:
        spans = self.steps.get(step)
        span = spans.pop() if spans else self._child(f"flowc.step {step}", self.run_span, {"flowc.step": step})
        if step in self.open_steps:
            del self.open_steps[len(self.open_steps) - 1 - self.open_steps[::-1].index(step)]
        span.set_attribute("flowc.status", status)
        if status in ("failed", "timed_out", "cancelled") and detail not in (None, ""):
            span.set_status(Status(StatusCode.ERROR, self._text(detail)))
        elif status == "failed":
            span.set_status(Status(StatusCode.ERROR))
        elif detail not in (None, ""):
            span.set_attribute("flowc.detail", self._text(detail))
        span.end()

    def _on_issue(self, req: Any, step: str | None) -> None:
        if step is None and self.open_steps:
            step = self.open_steps[-1]
        self.calls[req.id] = (req, step, None)

    def _on_start(self, req: Any) -> None:
        _req, step, _ = self.calls.get(req.id, (req, None, None))
        spans = self.steps.get(step) if step is not None else None
        parent = spans[-1] if spans else self.run_span
        attributes: dict[str, Any] = {"flowc.request": req.id}
        if step is not None:
            attributes["flowc.step"] = step
        if req.kind == "sleep":
            attributes["flowc.sleep_ms"] = req.ms
            span = self._child("flowc.sleep", parent, attributes)
        else:
            attributes.update({"flowc.capability": req.capability, "flowc.name": req.name})
            span = self._child(f"flowc.call {req.capability}:{req.name}", parent, attributes)
        self.calls[req.id] = (req, step, span)

    def _on_answer(self, rid: int, answer: Any) -> None:
        _req, _step, span = self.calls.pop(rid, (None, None, None))
        if span is None:
            return
        span.set_attribute("flowc.status", _CALL_STATUS.get(answer.kind, answer.kind))
        if answer.kind != "result":
            span.set_status(Status(StatusCode.ERROR, self._text(getattr(answer, "message", "") or answer.kind)))
        span.end()

    def _on_cancel(self, rid: int) -> None:
        _req, step, span = self.calls.pop(rid, (None, None, None))
        if span is not None:
            span.set_attribute("flowc.status", "cancelled")
            span.end()
        if step in self.open_steps:
            self._on_step_end(step, "cancelled")

    def _on_run_end(self, record: dict | None) -> None:
        for step in self.open_steps[::-1]:
            self._on_step_end(step, "cancelled")
        for rid in list(self.calls):
            self._on_cancel(rid)
        span, self.run_span = self.run_span, None
        if span is None:
            return
        status = record.get("status") if isinstance(record, dict) else "crashed"
        span.set_attribute("flowc.status", str(status))
        error = record.get("error") if isinstance(record, dict) else None
        if status not in ("success", "completed"):
            message = error.get("message") if isinstance(error, dict) else error
            span.set_status(Status(StatusCode.ERROR, self._text(message or status)))
        span.end()
