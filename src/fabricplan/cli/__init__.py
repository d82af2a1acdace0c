"""Command-line interface: parses, calls the library, prints. No modelling happens here."""
