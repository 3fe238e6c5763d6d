"""Requests and answers as JSON, for the journal.

An answer is ``{"kind": "result", "value": V}`` (V the host's JSON value),
``{"kind": "error" | "thrown" | "timeout", "message": M}``, with the
``retriable`` flag and exception ``type_name`` a sync or asyncio driver
notes on answers made from a host's exception (WorkflowSkill reads both).
A request is described by what the kernel asked: ``{"kind": "call",
"capability", "name", "args", "timeout_ms"}`` or ``{"kind": "sleep", "ms"}``
(with ``"deadline": true`` for the kernel's own deadline timer);
on replay the request the kernel issues again must have the same
description, else the run is not the journaled one.
"""

from __future__ import annotations

import json
from typing import Any

from flowc.runtime.kernel import Error, Result, Thrown, TimedOut

_KINDS = {"error": Error, "thrown": Thrown}


class NotSerialisable(Exception):
    """A host answered with a value JSON cannot hold."""


def encode_answer(answer: Any) -> dict:
    if answer.kind == "result":
        try:
            json.dumps(answer.value, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise NotSerialisable(f"the host's answer is not JSON: {exc}") from None
        out = {"kind": "result", "value": answer.value}
    else:
        out = {"kind": answer.kind, "message": answer.message}
    for attr in ("retriable", "type_name"):
        if hasattr(answer, attr):
            out[attr] = getattr(answer, attr)
    return out


def decode_answer(body: dict) -> Any:
    kind = body["kind"]
    if kind == "result":
        answer = Result(body["value"])
    elif kind == "timeout":
        answer = TimedOut(body.get("message", "timeout"))
    else:
        answer = _KINDS[kind](body["message"])
    for attr in ("retriable", "type_name"):
        if attr in body:
            setattr(answer, attr, body[attr])
    return answer


def _sleep(req: Any) -> dict:
    if getattr(req, "deadline", False):  # the kernel's own timer (with_deadline), not a pause
        return {"kind": "sleep", "ms": req.ms, "deadline": True}
    return {"kind": "sleep", "ms": req.ms}


def describe(req: Any) -> dict:
    if req.kind == "sleep":
        return _sleep(req)
    return {"kind": "call", "capability": req.capability, "name": req.name, "args": _plain(req.args),
            "timeout_ms": req.timeout_ms}


def _plain(value: Any) -> Any:
    """Arguments as JSON holds them (tuples are lists; anything else its repr)."""
    return json.loads(json.dumps(value, default=repr))


def same_request(journaled: dict, req: Any) -> bool:
    if req.kind == "sleep":
        return journaled == _sleep(req)
    if (journaled.get("kind") != "call" or journaled.get("capability") != req.capability
            or journaled.get("name") != req.name or journaled.get("timeout_ms") != req.timeout_ms):
        return False
    # the arguments as they came back from JSON (tuples are lists; the fast test first)
    return journaled.get("args") == req.args or journaled.get("args") == _plain(req.args)
