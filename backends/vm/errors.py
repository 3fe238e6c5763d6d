"""The VM's errors, one module that every loader and the shared expression
machine import (a one-dialect bundle holds no other dialect's VM for them).
MicroPython-compatible.
"""

# MicroPython style: explicit `object` bases read the same on both interpreters.


class VMError(Exception):
    """Base of every error the VM raises."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __str__(self):
        return self.message


class VerifyError(VMError):
    """The bytecode is malformed, of an unknown version, or fails verification."""
