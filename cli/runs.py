"""``flowc runs list|show``: the runs of a journal (docs/durable.md)."""

from __future__ import annotations

import json
import time
from typing import Any

from flowc.cli.exits import EXIT_OK
from flowc.cli.options import CliParser
from flowc.cli.output import usage_error


def add_parser(sub) -> None:
    runs = sub.add_parser("runs", help="list or show the runs of a journal")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True, parser_class=CliParser)
    rl = runs_sub.add_parser("list", help="every run of the journal")
    rl.add_argument("--journal", metavar="DB", required=True)
    rl.add_argument("--json", action="store_true", help="a JSON list of {run_id, status, workflow, started, ...}")
    rl.set_defaults(func=runs_list)
    rs = runs_sub.add_parser("show", help="one run: its header, entries, repeated calls and record")
    rs.add_argument("run_id", metavar="RUN_ID")
    rs.add_argument("--journal", metavar="DB", required=True)
    rs.add_argument("--json", action="store_true")
    rs.set_defaults(func=runs_show)


def _when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def runs_list(args: Any) -> int:
    from flowc import journal
    from flowc.host import write_json

    try:
        runs = journal.open_journal(args.journal).runs()
    except journal.JournalError as exc:
        return usage_error(str(exc))
    if args.json:
        write_json(runs)
        return EXIT_OK
    from flowc.termtext import shown

    for r in runs:
        print(shown(f"{r['run_id']}  {r['status']:<10}  {_when(r['started'])}  {r['entries']:>6} entries  "
                    f"{r['repeated']} repeated  {r['workflow']}"))
    return EXIT_OK


def runs_show(args: Any) -> int:
    from flowc import journal
    from flowc.host import write_json

    try:
        store = journal.open_journal(args.journal)
        info = store.run_info(args.run_id)
        entries, notes = store.entries(args.run_id, repair=False)  # showing changes nothing
    except journal.JournalError as exc:
        return usage_error(str(exc))
    shown_entries = [{"seq": e.seq, "kind": e.kind, "request": e.request_id, "at": e.at, "body": e.body}
                     for e in entries]
    repeated = [{"request": e.request_id, "capability": e.body.get("capability"), "name": e.body.get("name"),
                 "kind": e.body.get("kind")} for e in entries if e.kind == "repeat"]
    info = {k: v for k, v in info.items() if k != "checksum"}
    info.update(entries=shown_entries, repeated=repeated, notes=notes)
    if args.json:
        write_json(info)
        return EXIT_OK
    from flowc.termtext import shown_lines

    out = [f"run {info['run_id']}  {info['status']}", f"workflow: {info['workflow']}",
           f"hash: {info['workflow_hash']}", f"started: {_when(info['started'])}",
           f"finished: {_when(info['finished'])}", "inputs: " + json.dumps(info["inputs"], ensure_ascii=False),
           f"entries: {len(entries)}"]
    for e in entries:
        body = json.dumps(e.body, ensure_ascii=False, default=repr)
        out.append(f"  {e.seq:>5} {e.kind:<8} {'' if e.request_id is None else e.request_id:>5}  "
                   f"{body[:100] + ('...' if len(body) > 100 else '')}")
    out += [f"repeated: request {r['request']} {r['capability']} {r['name']}" for r in repeated]
    out += [f"note: {n}" for n in notes]
    if info["record"] is not None:
        out.append(f"record status: {info['record'].get('status')}")
    print(shown_lines("\n".join(out)))
    return EXIT_OK
