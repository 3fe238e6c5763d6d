"""A live progress display of a run on a terminal (rich).

:class:`ProgressObserver` reads a run's events (an observer of
:class:`flowc.hosts.trace.ObservedHost`) and keeps a table on the
terminal up to date: each step with its state (running, or how it ended)
and duration, the host calls in flight, and the run's status. Workflow
text (step ids, tool names) is shown through :mod:`flowc.termtext` and as
plain rich ``Text`` (never markup), so no id can drive the terminal or
style the table. Needs the ``progress`` extra (``rich``).
"""

from __future__ import annotations

import time
from typing import Any

from flowc.termtext import shown
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

_STYLE = {"running": "yellow", "success": "green", "done": "green", "failed": "red", "timed_out": "red",
          "cancelled": "magenta", "skipped": "dim", "pruned": "dim"}
MAX_ROWS = 30  # the last steps shown; older ones are counted


class ProgressObserver:
    """Draws a run's progress on ``console`` (a terminal) while it runs."""

    def __init__(self, console: Console, title: str = "run", clock=time.perf_counter) -> None:
        self.console = console
        self.title = shown(title)
        self.clock = clock
        self.live: Live | None = None
        self.began = 0.0
        self.rows: list[list] = []          # [step, state, started, duration or None]
        self.open: dict[str, list] = {}      # step -> its running row
        self.in_flight: dict[int, str] = {}  # request id -> "capability:name"
        self.calls = 0
        self.status = "running"

    def __call__(self, event: tuple) -> None:
        handler = getattr(self, "_on_" + event[0], None)
        if handler is not None:
            handler(*event[1:])
            if self.live is not None:
                self.live.update(self.render())

    # ------------------------------------------------------------ events
    def _on_run_start(self, run: Any) -> None:
        self.began = self.clock()
        self.live = Live(self.render(), console=self.console, refresh_per_second=8, transient=False)
        self.live.start()

    def _on_step_start(self, step: str) -> None:
        row = [shown(step), "running", self.clock(), None]
        self.rows.append(row)
        self.open[step] = row

    def _on_step_end(self, step: str, status: str, detail: Any = None) -> None:
        row = self.open.pop(step, None)
        if row is None:  # never started: skipped, pruned, cancelled at the end
            row = [shown(step), status, self.clock(), None]
            self.rows.append(row)
        row[1] = status
        row[3] = self.clock() - row[2]

    def _on_start(self, req: Any) -> None:
        if req.kind == "call":
            self.calls += 1
            self.in_flight[req.id] = shown(f"{req.capability}:{req.name}")

    def _on_answer(self, rid: int, answer: Any) -> None:
        self.in_flight.pop(rid, None)

    def _on_cancel(self, rid: int) -> None:
        self.in_flight.pop(rid, None)

    def _on_run_end(self, record: dict | None) -> None:
        self.status = shown(str(record.get("status"))) if isinstance(record, dict) else "crashed"
        for step in list(self.open):
            self._on_step_end(step, "cancelled")
        if self.live is not None:
            self.live.update(self.render())
            self.live.stop()
            self.live = None

    # ------------------------------------------------------------ drawing
    def render(self) -> Table:
        elapsed = self.clock() - self.began if self.began else 0.0
        table = Table(title=Text(f"{self.title}: {self.status}, {elapsed:.1f}s, {self.calls} host calls"),
                      title_justify="left", expand=False)
        table.add_column("step")
        table.add_column("state")
        table.add_column("time", justify="right")
        hidden = len(self.rows) - MAX_ROWS
        if hidden > 0:
            table.add_row(Text(f"... {hidden} earlier"), Text(""), Text(""))
        now = self.clock()
        for step, state, started, duration in self.rows[-MAX_ROWS:]:
            took = duration if duration is not None else now - started
            table.add_row(Text(step), Text(shown(state), style=_STYLE.get(state, "white")),
                          Text(f"{took * 1000:.0f} ms"))
        if self.in_flight:
            table.caption = Text("waiting for " + ", ".join(sorted(set(self.in_flight.values()))[:5]))
        return table


def progress_on_stderr(title: str) -> ProgressObserver:
    """A display on standard error (the record goes to standard output)."""
    return ProgressObserver(Console(stderr=True), title)
