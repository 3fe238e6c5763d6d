"""``--trace FILE`` and ``--progress`` of ``flowc run`` and ``flowc resume``:
what watches a run (docs/hosts-providers.md)."""

from __future__ import annotations

import os
import sys


def watched(args, host):
    """``(host, wrap)`` for --trace/--progress: the host the run is told to
    (an ObservedHost) and what wraps the program so its run's end is told
    and the trace file closed; None after reporting a usage error."""
    observers = _observers(args)
    if observers is None:
        return None
    if not observers:
        return host, lambda program: program
    from flowc.hosts.trace import ObservedHost, ObservedProgram

    observed = ObservedHost(host, *observers)
    closing = [o.sink.close for o in observers if hasattr(o, "sink")]
    return observed, lambda program: ObservedProgram(program, observed, closing)


def watching(args, host, workflow_path: str):
    """``(host, end)`` for a journaled run's --trace/--progress: the host its
    driver tells, and ``end(record)``, which ends a run the driver did not
    (one that crashed) and closes the trace file; None after a usage error."""
    observers = _observers(args, workflow_path)
    if observers is None:
        return None
    if not observers:
        return host, lambda record: None
    from flowc.hosts.trace import ObservedHost

    observed = ObservedHost(host, *observers)

    def end(record) -> None:
        observed.finish(record)
        for o in observers:
            if hasattr(o, "sink"):
                o.sink.close()
    return observed, end


def _observers(args, workflow_path: str | None = None) -> list | None:
    """What watches the run: a trace file (--trace), a live display
    (--progress, on a terminal). None after reporting a usage error."""
    from flowc.termtext import shown

    observers = []
    if args.trace_values and not args.trace:
        print("flowc: error: --trace-values needs --trace FILE", file=sys.stderr)
        return None
    if args.trace:
        from flowc.hosts.trace import open_trace

        try:
            observers.append(open_trace(args.trace, values=args.trace_values,
                                        workflow=os.path.basename(workflow_path or args.path)))
        except OSError as exc:
            print(shown(f"flowc: error: cannot write the trace file {args.trace}: {exc.strerror or exc}"),
                  file=sys.stderr)
            return None
    if args.progress and sys.stderr.isatty():
        try:
            from flowc.hosts.progress import progress_on_stderr
        except ImportError:
            print("flowc: error: --progress needs rich: pip install 'flowc[progress]'", file=sys.stderr)
            return None
        observers.append(progress_on_stderr(os.path.basename(workflow_path or args.path)))
    return observers
