"""The exceptions xrelay raises to its users.

Every user-facing failure is an `Error`; its message names the model node or the IR
location. `ShapeError` is also an xDSL `VerifyException`, so a shape rule that fails inside
the xDSL verifier is reported like any other verification failure.
"""

from xdsl.utils.exceptions import VerifyException


class Error(Exception):
    """Base class of every error xrelay reports to its users."""


class ShapeError(Error, VerifyException):
    """An op's operands or attributes do not satisfy its shape and type rule."""


class VerificationError(Error):
    """A module does not verify; the message starts with the failing op's location."""


class ParseError(Error):
    """Textual IR does not parse; the message starts with the file location."""


class UnsupportedOpsError(Error):
    """A model uses operators that have no converter; all of them are listed at once."""
