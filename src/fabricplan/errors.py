"""Errors that the CLI turns into one-line messages (exit 2) instead of tracebacks."""

from __future__ import annotations


class FabricplanError(Exception):
    """Base class for every error fabricplan reports to the user."""


class InputError(FabricplanError):
    """Unusable input: a file, a field or a command-line value.

    ``location`` names where the bad value sits (file, line, JSON/field path) so the message
    can say exactly which field and what was expected.
    """

    def __init__(self, message: str, location: str | None = None) -> None:
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}" if location else message)


class CatalogError(InputError):
    """A catalog name that does not exist, or a malformed catalog file."""
