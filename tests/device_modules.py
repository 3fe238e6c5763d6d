"""The modules a MicroPython test copies side by side: the bundler's closure
of the device entry (every scheduling model), so that no test keeps a list
of its own that a new device module would leave behind."""

from __future__ import annotations

from flowc.backends.vm.bundle import closure


def device_module_files() -> list[str]:
    """The paths of the device modules, in the bundler's import order."""
    return [str(module.path) for module in closure()]
