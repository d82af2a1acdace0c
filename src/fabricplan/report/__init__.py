"""Rendering of results: rich tables (terminal), JSON, Markdown and HTML."""
