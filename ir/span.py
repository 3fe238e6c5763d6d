"""Source spans: where in which file an IR node or expression came from."""

from __future__ import annotations

import attrs


@attrs.frozen(order=True)
class Span:
    """A 1-based, inclusive-start / exclusive-end region of a source file.

    ``end_col`` points one past the last character, so a single character
    at column 5 is ``col=5, end_col=6``.
    """

    file: str = ""
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    @property
    def known(self) -> bool:
        return self.line > 0

    def shifted(self, line_offset: int = 0, col_offset: int = 0) -> Span:
        return attrs.evolve(
            self,
            line=self.line + line_offset,
            end_line=self.end_line + line_offset,
            col=self.col + col_offset,
            end_col=self.end_col + col_offset,
        )

    def cover(self, other: Span) -> Span:
        """The smallest span holding both (same file assumed)."""
        if not self.known:
            return other
        if not other.known:
            return self
        start = min((self.line, self.col), (other.line, other.col))
        end = max((self.end_line, self.end_col), (other.end_line, other.end_col))
        return Span(self.file, start[0], start[1], end[0], end[1])


NO_SPAN = Span()
