"""Result tables that keep their figures on any terminal width.

A results table has a name column, a few short figure columns and a long pass-list
column. Rich, left to share a narrow terminal itself, can squash ``no_wrap`` columns to
nothing (the figures vanish while the long columns keep their width), so
:func:`results_table` gives every column an explicit width: the figures their full
width, and the name and the list what is left, 2 : 3, each shortened with an ellipsis.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

#: Each column costs its content plus two spaces of padding and one rule.
_CELL_OVERHEAD = 3
_NARROWEST = 8


def results_table(
    title: str,
    name: str,
    figures: Sequence[str],
    passes: str,
    rows: Sequence[Sequence[str]],
    width: int,
) -> Table:
    """A table of ``name``, the ``figures`` columns and ``passes``, fitted to ``width``.

    Args:
        title: The table's title.
        name: Header of the first column (a unit or program).
        figures: Headers of the right-aligned figure columns, never shortened.
        passes: Header of the last column (a pass list or a reason).
        rows: One cell per column in each row.
        width: The console's width.
    """
    figure_widths = [
        max([len(header), *(len(row[index + 1]) for row in rows)]) for index, header in enumerate(figures)
    ]
    fixed = sum(figure_widths) + _CELL_OVERHEAD * (len(figures) + 2) + 1
    longest_name = max([len(name), *(len(row[0]) for row in rows)])
    longest_passes = max([len(passes), *(len(row[-1]) for row in rows)])
    room = max(width - fixed, 2 * _NARROWEST)
    if longest_name + longest_passes <= room:
        name_width, passes_width = longest_name, longest_passes
    else:
        name_width = min(longest_name, max(_NARROWEST, room * 2 // 5))
        passes_width = max(_NARROWEST, room - name_width)
    table = Table(title=title)
    table.add_column(name, overflow="ellipsis", no_wrap=True, width=name_width)
    for header, figure_width in zip(figures, figure_widths, strict=True):
        table.add_column(header, justify="right", no_wrap=True, width=figure_width)
    table.add_column(passes, overflow="ellipsis", no_wrap=True, width=passes_width)
    for row in rows:
        table.add_row(*row)
    return table
