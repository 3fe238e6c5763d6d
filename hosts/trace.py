"""Run traces: one JSON object per line for each run, step and host call.

A :class:`Tracer` is the observer the drivers tell what a run does (see
``flowc.runtime.drivers.watcher``); :meth:`Tracer.wrap` gives the host a
run is driven with, carrying it. Each event is written as it happens
(``flowc run --trace run.jsonl``):

| event | fields |
|---|---|
| ``run_start`` | ``run``, ``ts`` (UTC), ``workflow`` |
| ``step_start`` / ``step_end`` | ``step``; at the end ``status``, ``duration_ms``, ``detail`` (an error or reason) |
| ``call_start`` / ``call_end`` | ``request``, ``step``, ``capability``, ``name``; at the end ``status`` (``ok``, ``error``, ``failure``, ``timeout``, ``cancelled``), ``duration_ms``, ``message`` |
| ``sleep_start`` / ``sleep_end`` | ``request``, ``step``, ``ms``; at the end ``duration_ms`` |
| ``run_end`` | ``status``, ``duration_ms``, ``error`` |

Every event has ``run`` (a random id per run), ``event`` and ``t_ms`` (ms
since the run started). With ``values=True`` a call's ``args`` and
``result`` are written too, cut to ``max_chars`` per string and a few
levels deep. Secrets stay out: values under keys that name credentials
(``Authorization``, ``api_key``, ``token``, ...) and URL query parameters
named so are written ``[redacted]``, and the value of every environment
variable whose name says it holds a secret (``*_API_KEY``, ``*TOKEN*``,
``*SECRET*``, ``*PASSWORD*``) is removed from every line.

Every program of both backends runs on the kernel's drivers; a caller that
drives the host some other way still gets its host calls traced by the
wrapped host itself (:class:`ObservedHost`, which also carries other
observers).
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import re
import time
import uuid
from typing import Any, Self, TextIO

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(r"authori[sz]ation|api[-_]?key|token|secret|password|passwd|cookie|credential|"
                         r"signature|private[-_]?key|session", re.IGNORECASE)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_SECRET_QUERY = re.compile(r"([?&][^=&#\s]{0,64}(?:key|token|secret|password|sig|auth)[^=&#\s]{0,64}=)"
                           r"[^&#\s\"]*", re.IGNORECASE)
_ANSWER_STATUS = {"result": "ok", "error": "error", "thrown": "failure", "timeout": "timeout"}
MAX_DEPTH = 6
MAX_ITEMS = 20


def environment_secrets() -> list[str]:
    """Values of the environment variables whose names say they are secrets."""
    return sorted({v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8},
                  key=len, reverse=True)


def scrubbed(text: str, secrets: list[str]) -> str:
    """``text`` without any of ``secrets`` (also as JSON escapes them)."""
    for secret in secrets:
        text = text.replace(secret, REDACTED).replace(json.dumps(secret)[1:-1], REDACTED)
    return text


def redacted(value: Any, max_chars: int, depth: int = 0) -> Any:
    """``value`` fit for a trace: credentials under telling keys redacted,
    strings cut to ``max_chars``, containers to MAX_ITEMS and MAX_DEPTH."""
    if isinstance(value, str):
        text = value if len(value) <= max_chars else value[:max_chars] + "..."
        return _SECRET_QUERY.sub(r"\1" + REDACTED, text)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        out = {}
        for i, (key, item) in enumerate(value.items()):
            if i == MAX_ITEMS:
                out["..."] = f"{len(value) - MAX_ITEMS} more"
                break
            key = str(key)
            out[key] = REDACTED if _SECRET_KEY.search(key) else redacted(item, max_chars, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        items = [redacted(v, max_chars, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"... {len(value) - MAX_ITEMS} more")
        return items
    return redacted(repr(value), max_chars, depth)


class Tracer:
    """Writes a run's events to ``sink`` (a text file), one JSON object a line."""

    def __init__(self, sink: TextIO, *, values: bool = False, max_chars: int = 200,
                 workflow: str | None = None, clock=time.perf_counter) -> None:
        self.sink = sink
        self.values = values
        self.max_chars = max_chars
        self.workflow = workflow
        self.clock = clock
        self.secrets = environment_secrets()
        self.run_id: str | None = None
        self._began = 0.0
        self._steps: dict[str, list[float]] = {}        # step -> start times (a step may run again)
        self._open: list[str] = []                       # steps started and not ended, in order
        self._requests: dict[int, tuple[Any, Any, float | None]] = {}  # id -> (request, step, started)

    # ------------------------------------------------------------ the drivers' observer
    def __call__(self, event: tuple) -> None:
        kind = event[0]
        handler = getattr(self, "_on_" + kind, None)
        if handler is not None:
            handler(*event[1:])

    def _on_run_start(self, run: Any) -> None:
        self.start_run()

    def _on_issue(self, req: Any, step: Any) -> None:
        if step is None and self._open:  # a run that names no step to the kernel: the one running
            step = self._open[-1]
        self._requests[req.id] = (req, step, None)

    def _on_start(self, req: Any) -> None:
        _req, step, _ = self._requests.get(req.id, (req, None, None))
        self._requests[req.id] = (req, step, self.clock())
        if req.kind == "sleep":
            self.write("sleep_start", request=req.id, step=step, ms=req.ms)
            return
        fields = {"request": req.id, "step": step, "capability": req.capability, "name": req.name}
        if self.values:
            fields["args"] = redacted(req.args, self.max_chars)
        self.write("call_start", **fields)

    def _on_answer(self, rid: int, answer: Any) -> None:
        req, step, started = self._requests.pop(rid, (None, None, None))
        if req is None:
            return
        fields: dict[str, Any] = {"request": rid, "step": step, "duration_ms": self._since(started)}
        if req.kind == "sleep":
            self.write("sleep_end", **fields)
            return
        fields.update(capability=req.capability, name=req.name, status=_ANSWER_STATUS.get(answer.kind, answer.kind))
        if answer.kind == "result":
            if self.values:
                fields["result"] = redacted(answer.value, self.max_chars)
        elif getattr(answer, "message", None):
            fields["message"] = redacted(str(answer.message), self.max_chars)
        self.write("call_end", **fields)

    def _on_cancel(self, rid: int) -> None:
        req, step, started = self._requests.pop(rid, (None, None, None))
        if req is not None and started is not None:
            fields: dict[str, Any] = {"request": rid, "step": step, "duration_ms": self._since(started)}
            if req.kind == "sleep":
                self.write("sleep_end", **fields, status="cancelled")
            else:
                self.write("call_end", **fields, capability=req.capability, name=req.name, status="cancelled")
        if step in self._open:  # the step waiting for it was stopped (a race's loser): it leaves no record
            self._on_step_end(step, "cancelled")

    def _on_step_start(self, step: str) -> None:
        self._steps.setdefault(step, []).append(self.clock())
        self._open.append(step)
        self.write("step_start", step=step)

    def _on_step_end(self, step: str, status: str, detail: Any = None) -> None:
        starts = self._steps.get(step)
        started = starts.pop() if starts else None
        if step in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(step)]
        fields: dict[str, Any] = {"step": step, "status": status, "duration_ms": self._since(started)}
        if detail not in (None, ""):
            fields["detail"] = redacted(str(detail), self.max_chars)
        self.write("step_end", **fields)

    def _on_run_end(self, record: dict | None) -> None:
        self.end_run(record)

    # ------------------------------------------------------------ runs
    def start_run(self) -> None:
        """Begin a run's events (a driver does; a command line may first)."""
        if self.run_id is not None:
            return
        self.run_id = uuid.uuid4().hex[:16]
        self._began = self.clock()
        self._steps.clear()
        self._open.clear()
        self._requests.clear()
        ts = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        self.write("run_start", ts=ts, workflow=self.workflow)

    def end_run(self, record: dict | None) -> None:
        """End the run's events with its record (None: the run crashed)."""
        if self.run_id is None:
            return
        for step in self._open[::-1]:  # stopped with the run
            self._on_step_end(step, "cancelled")
        status = record.get("status") if isinstance(record, dict) else "crashed"
        fields: dict[str, Any] = {"status": status, "duration_ms": self._since(self._began)}
        error = record.get("error") if isinstance(record, dict) else None
        if error:
            fields["error"] = redacted(error, self.max_chars)
        self.write("run_end", **fields)
        self.run_id = None

    # ------------------------------------------------------------ writing
    def _since(self, started: float | None) -> float | None:
        return None if started is None else round((self.clock() - started) * 1000, 3)

    def write(self, event: str, **fields: Any) -> None:
        line = {"event": event, "run": self.run_id, "t_ms": self._since(self._began)}
        line.update(fields)
        text = scrubbed(json.dumps(line, ensure_ascii=False, default=repr), self.secrets)
        self.sink.write(text + "\n")
        self.sink.flush()

    # ------------------------------------------------------------ hosts
    def wrap(self, host: Any) -> ObservedHost:
        """``host`` with this tracer watching its runs."""
        return ObservedHost(host, self)


class ObservedHost:
    """``host`` whose runs are told to ``observers`` (a :class:`Tracer`, an
    OpenTelemetry exporter ...): the drivers find :meth:`observer` on it.
    Calls a driver reports pass straight through; the calls of a run off
    the kernel are reported here, and :meth:`finish` ends such a run."""

    def __init__(self, host: Any, *observers: Any) -> None:
        self.host = host
        self.observers = observers
        self.driven = False   # a kernel driver reports this run
        self.open = False     # a run_start was told and no run_end yet
        self._calls = 0

    def observer(self, event: tuple) -> None:
        if event[0] == "run_start":
            self.driven = self.open = True
        elif event[0] == "run_end":
            self.driven = self.open = False
        for observe in self.observers:
            observe(event)

    def finish(self, record: dict | None) -> None:
        """End a run no driver ended (one off the kernel, or one that crashed)."""
        if self.open:
            self.observer(("run_end", record))

    def call(self, capability: str, name: str, args: dict, idempotency_key: str | None = None) -> Any:
        if idempotency_key is not None and _takes_key(self.host):  # a journaled run's key reaches the host
            return self._call_keyed(capability, name, args, idempotency_key)
        if self.driven:
            return self.host.call(capability, name, args)
        if not self.open:
            self.observer(("run_start", None))
            self.driven = False
        self._calls += 1
        req = _HostCall(self._calls, capability, name, args)
        self.observer(("start", req))
        try:
            value = self.host.call(capability, name, args)
        except Exception as exc:
            self.observer(("answer", req.id, _Answer.of(exc)))
            raise
        if inspect.isawaitable(value):
            return self._finish_async(req, value)
        self.observer(("answer", req.id, _Answer("result", value=value)))
        return value

    def _call_keyed(self, capability: str, name: str, args: dict, key: str) -> Any:
        """Only a kernel driver (the journaling ones) passes a key: it reports the call."""
        return self.host.call(capability, name, args, idempotency_key=key)

    async def _finish_async(self, req: _HostCall, pending: Any) -> Any:
        try:
            value = await pending
        except Exception as exc:
            self.observer(("answer", req.id, _Answer.of(exc)))
            raise
        self.observer(("answer", req.id, _Answer("result", value=value)))
        return value

    def sleep(self, ms: float) -> Any:
        return self.host.sleep(ms)

    # a host that starts and stops its providers (``async with host:``) still does
    async def __aenter__(self) -> Self:
        await self.host.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self.host.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:  # the host's own attributes (calls, sleeps, log ...)
        if name == "host":
            raise AttributeError(name)
        return getattr(self.host, name)


class ObservedProgram:
    """A compiled program (a module, a VM program) whose runs, when they end,
    end the observed host's run (one off the kernel's drivers: they end
    their own) and call ``on_end`` (close a trace file)."""

    def __init__(self, program: Any, observed: ObservedHost, on_end: list | tuple = ()) -> None:
        self.program = program
        self.observed = observed
        self.on_end = on_end

    def run(self, inputs: dict, host: Any, *args: Any, **kwargs: Any) -> dict:
        record = None
        try:
            record = self.program.run(inputs, host, *args, **kwargs)
            return record
        finally:
            self._ended(record)

    def _ended(self, record: dict | None) -> None:
        self.observed.finish(record)
        for end in self.on_end:
            end()

    def __getattr__(self, name: str) -> Any:
        if name == "program":
            raise AttributeError(name)
        value = getattr(self.program, name)
        if name != "run_async" or not callable(value):
            return value

        async def run_async(inputs: dict, host: Any, *args: Any, **kwargs: Any) -> dict:
            record = None
            try:
                record = await value(inputs, host, *args, **kwargs)
                return record
            finally:
                self._ended(record)
        return run_async


def _takes_key(host: Any) -> bool:
    """Does ``host.call`` accept the keyword ``idempotency_key``?"""
    try:
        params = inspect.signature(host.call).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "idempotency_key" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class _HostCall:
    kind = "call"

    def __init__(self, rid: int, capability: str, name: str, args: dict) -> None:
        self.id = rid
        self.capability = capability
        self.name = name
        self.args = args


class _Answer:
    def __init__(self, kind: str, value: Any = None, message: str | None = None) -> None:
        self.kind = kind
        self.value = value
        self.message = message

    @classmethod
    def of(cls, exc: Exception) -> _Answer:
        message = getattr(exc, "message", None)
        message = message if isinstance(message, str) else str(exc)
        if getattr(exc, "timeout", False):
            return cls("timeout", message=message)
        return cls("error" if getattr(exc, "retriable", False) else "thrown", message=message)


def open_trace(path: str, *, values: bool = False, workflow: str | None = None) -> Tracer:
    """A tracer writing to a new file at ``path`` (OSError if it can't)."""
    return Tracer(open(path, "w", encoding="utf-8"), values=values, workflow=workflow)
