"""Terminal layouts that never cut a cell: a table when it fits the width, stacked blocks otherwise.

rich squeezes a table that is wider than the terminal by shrinking its columns below their longest
word and cutting that word with "…" ("875,0…", "llama3-70b-pretr…"). Piped output is 80 columns
wide. `FitTable` decides at render time, from the console's width: it gives every column at least
its longest word (cell or header) and spreads the rest of the width by need; when even the longest
words do not fit side by side it prints one block per row instead ("row name", then one
"header: value" line per column, wrapped under a hanging indent). Words are never broken unless a
single word is wider than the whole terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

Cell = str | Text


def as_text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def one_line(cell: Cell, separator: str = ", ") -> Text:
    """A multi-line cell on one line, its lines joined by `separator` (styles kept)."""
    text = as_text(cell)
    if "\n" not in text.plain:
        return text
    return Text(separator).join(text.split("\n"))


# Chinese, Japanese and Korean text breaks between any two characters, not only at spaces.
_CJK_UNITS = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]|"
                        r"[^\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")


def word_width(word: str) -> int:
    """The narrowest width that shows `word` without cutting it: the word itself, or for CJK text
    its widest unbreakable unit (one character, or a run of Latin letters inside it)."""
    return max((cell_len(unit) for unit in _CJK_UNITS.findall(word)), default=0)


def wrapped_lines(text: str, width: int) -> int:
    """Lines `text` takes when word-wrapped to `width` cells (as rich wraps a table cell)."""
    count = 0
    for line in text.split("\n") or [""]:
        used = -1
        lines = 1
        for word in line.split():
            size = cell_len(word)
            if size > width:  # CJK text folds across lines
                lines += (size - 1) // width + (1 if used >= 0 else 0)
                used = (size - 1) % width + 1
                continue
            if used >= 0 and used + 1 + size > width:
                lines += 1
                used = size
            else:
                used = size if used < 0 else used + 1 + size
        count += lines
    return count


def fit_widths(cells: Sequence[Sequence[str]], available: int) -> list[int] | None:
    """Column widths for `cells` (rows of plain text, header included) within `available` cells.

    Every column gets at least its longest word, so no word is ever cut; None when those alone do
    not fit. The spare width then goes, step by step, where it saves the most lines per cell of
    width, until no line can be saved; what is left stays unused.
    """
    columns = len(cells[0]) if cells else 0
    minimums = [max(1, max((max((word_width(w) for w in row[c].split()), default=0) for row in cells),
                           default=0)) for c in range(columns)]
    maximums = [max(minimums[c], max((max((cell_len(line) for line in row[c].split("\n")), default=0)
                                      for row in cells), default=0)) for c in range(columns)]
    if sum(minimums) > available:
        return None
    widths = list(minimums)
    spare = available - sum(widths)
    # lines[c][w - minimums[c]][r]: lines of row r's cell in column c at width w
    lines = [[[wrapped_lines(row[c], w) for row in cells] for w in range(minimums[c], maximums[c] + 1)]
             for c in range(columns)]

    # widths at which some cell of the column takes fewer lines than one cell narrower
    breakpoints = [[w for w in range(minimums[c] + 1, maximums[c] + 1)
                    if lines[c][w - minimums[c]] != lines[c][w - 1 - minimums[c]]] for c in range(columns)]

    def total(trial: list[int]) -> int:
        """Lines of the table, then (as a tie-break) lines of all cells: a number with its unit
        ("21.60 kW") stays on one line when the width is there, even if its row is taller anyway."""
        per_cell = [[lines[c][trial[c] - minimums[c]][r] for c in range(columns)] for r in range(len(cells))]
        return sum(max(row) for row in per_cell) * 1_000_000 + sum(sum(row) for row in per_cell)

    def at(c: int, width: int, r: int) -> int:
        return lines[c][width - minimums[c]][r]

    def candidates() -> list[list[int]]:
        """Trial widths: one column widened to its next breakpoint, or, per row, every column that
        holds that row's height widened just enough to take a line less (rows wrap in several
        columns at once, and widening one of them alone saves nothing)."""
        out = []
        for c in range(columns):
            for width in (w for w in breakpoints[c] if widths[c] < w <= widths[c] + spare):
                out.append(widths[:c] + [width] + widths[c + 1:])
                break
        for r in range(len(cells)):
            height = max(at(c, widths[c], r) for c in range(columns))
            trial = list(widths)
            for c in range(columns):
                if at(c, widths[c], r) == height:
                    shorter = next((w for w in range(widths[c] + 1, maximums[c] + 1) if at(c, w, r) < height), None)
                    if shorter is None:
                        break
                    trial[c] = shorter
            else:
                if trial != widths and sum(trial) - sum(widths) <= spare:
                    out.append(trial)
        return out

    current = total(widths)
    while spare > 0:
        best: tuple[float, list[int]] | None = None  # (lines saved per cell of width, widths)
        for trial in candidates():
            saved = current - total(trial)
            if saved > 0:
                rate = saved / (sum(trial) - sum(widths))
                if best is None or rate > best[0]:
                    best = (rate, trial)
        if best is None:
            break
        spare -= sum(best[1]) - sum(widths)
        widths = best[1]
        current = total(widths)
    return widths


def hanging(console: Console, label: Text | str, value: Cell, width: int, indent: int = 2) -> list[Text]:
    """`label value` wrapped to `width`, continuation lines indented under the value (or under the
    label plus four cells when the label takes more than half the line)."""
    label_text = as_text(label).copy()
    value_text = as_text(value)
    lead = cell_len(label_text.plain)
    if lead > width // 2:
        lines = [label_text] if label_text.plain.strip() else []
        pad = min(indent + 4, max(0, width - 20))
        wrapped = value_text.wrap(console, max(1, width - pad), overflow="fold")
        return lines + [Text(" " * pad) + line for line in wrapped]
    wrapped = value_text.wrap(console, max(1, width - lead), overflow="fold")
    out: list[Text] = []
    for number, line in enumerate(wrapped):
        out.append((label_text if number == 0 else Text(" " * lead)) + line)
    return out or [label_text]


@dataclass
class FitTable:
    """A table that fits the terminal or, when it cannot, prints one block per row.

    `headers[i]` names column i; `justify[i]` is "left" or "right"; `header_styles` and
    `column_styles` are optional rich styles. Column 0 names the row in the stacked layout.
    """

    headers: Sequence[Cell]
    rows: Sequence[Sequence[Cell]]
    title: str | None = None
    justify: Sequence[str] | None = None
    header_styles: Sequence[str] | None = None
    column_styles: Sequence[str] | None = None
    caption: str | None = None
    show_header: bool = True
    stacked_title: Sequence[int] = field(default_factory=lambda: (0,))

    def _overhead(self, columns: int) -> int:
        # box.SIMPLE_HEAD without outer edge: a one-cell divider and one cell of right padding between
        # columns (two spaces), nothing at the outer edges.
        return 2 * (columns - 1)

    def widths(self, width: int) -> list[int] | None:
        rows = [*([self.headers] if self.show_header else []), *self.rows]
        cells = [[as_text(cell).plain for cell in row] for row in rows]
        return fit_widths(cells, width - self._overhead(len(self.headers)))

    def table(self, widths: Sequence[int]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                      show_header=self.show_header, header_style="bold")
        for index, header in enumerate(self.headers):
            table.add_column(as_text(header), width=widths[index], overflow="fold",
                             justify=(self.justify[index] if self.justify else "left"),  # type: ignore[arg-type]
                             header_style=self.header_styles[index] if self.header_styles else "bold",
                             style=self.column_styles[index] if self.column_styles else None)
        for row in self.rows:
            table.add_row(*(as_text(cell) for cell in row))
        return table

    def stacked(self, console: Console, width: int) -> list[Text]:
        out: list[Text] = []
        if not self.show_header:  # key / value rows: "key: value" under a hanging indent
            for row in self.rows:
                label = as_text(row[0]).copy()
                label.stylize("bold")
                out += hanging(console, label + Text(": "), Text("  ").join(one_line(c) for c in row[1:]), width)
            return out
        for row in self.rows:
            name = Text(" ").join(as_text(row[i]) for i in self.stacked_title if as_text(row[i]).plain)
            name.stylize("bold")
            out += hanging(console, "", name, width)
            for index, cell in enumerate(row):
                if index in self.stacked_title or not as_text(cell).plain.strip():
                    continue
                header = as_text(self.headers[index]).plain.replace("\n", " ").strip()
                label = Text(f"  {header}: " if header else "  ")
                out += hanging(console, label, one_line(cell), width)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if self.title:
            yield from hanging(console, "", Text(self.title, style="bold"), width)
        widths = self.widths(width)
        if widths is not None:
            yield self.table(widths)
        else:
            yield from self.stacked(console, width)
        if self.caption:
            yield from hanging(console, "", Text(self.caption, style="dim"), width)


@dataclass
class Lines:
    """Labelled lines (notes, footnotes, legends) wrapped to the console's width, each continuation
    line indented under its text; `style` applies to whole lines."""

    items: Sequence[tuple[Cell, Cell]]
    style: str = ""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for label, text in self.items:
            line_label, line_text = as_text(label).copy(), as_text(text).copy()
            if self.style:
                line_label.stylize(self.style)
                line_text.stylize(self.style)
            yield from hanging(console, line_label, line_text, options.max_width)


def plural(count: int, word: str, plural_word: str | None = None) -> str:
    """'1 switch', '24 switches', '1,024 GPUs': a count with its noun in the right number."""
    if count == 1:
        return f"1 {word}"
    if plural_word is None:
        plural_word = word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count:,} {plural_word}"
