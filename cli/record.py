"""A run record for people (``flowc run`` and ``flowc resume`` without --json)."""

from __future__ import annotations

import json


def print_record(record: dict) -> None:
    """The run record for people: status, outputs, steps, calls, sleeps.
    Ids, names and messages are shown with :mod:`flowc.termtext` escapes."""
    from flowc.termtext import shown, shown_lines

    out = [f"status: {shown(record['status'])}"]
    if record["error"] is not None:
        step = record["error"].get("step")
        out.append(f"error: {shown(record['error']['message'])}" + (f" (step {shown(step)})" if step else ""))
    out.append("outputs: " + json.dumps(record["outputs"], indent=2, sort_keys=True, ensure_ascii=False,
                                        default=repr))
    out.append("steps:")
    ids = [shown(s["id"]) for s in record["steps"]]
    width = max((len(i) for i in ids), default=0)
    for sid, s in zip(ids, record["steps"]):
        reason = f"  ({shown(s['reason'])})" if s.get("reason") else ""
        out.append(f"  {sid:<{width}}  {shown(s['status'])}{reason}")
    out.append(f"calls: {len(record['calls'])}")
    for c in record["calls"]:
        args = json.dumps(c["args"], sort_keys=True, ensure_ascii=False, default=repr)
        if len(args) > 100:
            args = args[:97] + "..."
        out.append(f"  {shown(c['capability'])} {shown(c['name'])} {args}")
    if record["sleeps_ms"]:
        out.append("sleeps (ms): " + ", ".join(str(ms) for ms in record["sleeps_ms"]))
    if record.get("in_flight"):
        out.append("in flight when interrupted: " + ", ".join(
            f"{shown(c['capability'])} {shown(c['name'])}" for c in record["in_flight"]))
    # JSON escapes C0 controls only: the outputs and arguments go through it too
    print(shown_lines("\n".join(out)))
