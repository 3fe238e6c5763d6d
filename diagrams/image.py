"""SVG and PNG through Graphviz's ``dot`` program, when it is installed."""

from __future__ import annotations

import shutil
import subprocess

IMAGE_FORMATS = ("svg", "png")

INSTALL_HINT = ("Graphviz is not installed: the `dot` program was not found on PATH.\n"
                "Install it (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
                "Windows: winget install graphviz) or ask for text that needs nothing: "
                "--format mermaid or --format dot.")


class GraphvizNotFound(RuntimeError):
    """`dot` is not on PATH."""

    def __init__(self) -> None:
        super().__init__(INSTALL_HINT)


class GraphvizFailed(RuntimeError):
    """`dot` ran and reported an error."""


def find_dot() -> str | None:
    return shutil.which("dot")


def render_image(dot_text: str, fmt: str, timeout: float = 120.0) -> bytes:
    """Run ``dot -T<fmt>`` on the DOT text and return the image bytes."""
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"unknown image format {fmt!r}; expected one of {', '.join(IMAGE_FORMATS)}")
    dot = find_dot()
    if dot is None:
        raise GraphvizNotFound()
    args = [dot, f"-T{fmt}"]
    if fmt == "png":
        args.append("-Gdpi=110")
    try:
        done = subprocess.run(args, input=dot_text.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False)
    except FileNotFoundError as exc:   # removed between which() and run()
        raise GraphvizNotFound() from exc
    except subprocess.TimeoutExpired as exc:
        raise GraphvizFailed(f"Graphviz took longer than {timeout:.0f}s") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
        raise GraphvizFailed(f"Graphviz failed: {message}")
    return done.stdout
