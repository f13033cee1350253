"""The domain's errors: one base class, each concrete error also the builtin a caller would catch."""

from .messages import Message


class SizingError(Exception):
    """Base class of every error the sizing domain raises (listed first in each subclass so that
    its __init__ runs; the builtin after it is what a caller would catch).

    `message` is a coded message (its text the English), so that the edge can say it in the
    caller's language; `field` names the input that caused it (dotted path, as a caller wrote
    it), when one did.
    """

    def __init__(self, message: Message, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class UnknownCardError(SizingError, LookupError):
    """No card or tier in the catalog has this id or alias."""


class UnknownModelError(SizingError, LookupError):
    """No model preset has this id or alias."""


class UnknownPrecisionError(SizingError, LookupError):
    """The precision or quantisation name is not one the service knows."""


class InvalidInputError(SizingError, ValueError):
    """The inputs are well-typed but cannot describe a real configuration."""
