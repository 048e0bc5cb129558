"""The plots of ``report.html``, drawn from a run's rows.

Three plots (:func:`plots`): the spread of per-unit gains with -Oz backup, a model's
predicted against measured sizes, and the gain against the unit's -Oz size. Each is a
``<figure>`` with its PNG inlined as a ``data:`` URI, so the page stays one
self-contained file (:mod:`llm_compiler.evaluation.report`).

matplotlib draws the plots; it is optional (``pip install 'llm-compiler[eval]'``) and
imported only when a page is drawn. Without it the page says so in place of them.
"""

from __future__ import annotations

import base64
import html
import io
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from llm_compiler.core.metrics import total_improvement
from llm_compiler.evaluation.cells import Record, gain, percent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _note(text: str) -> str:
    """A note in place of a plot that cannot be drawn."""
    return f'<p class="note">{html.escape(text)}</p>'


def plots(rows: Sequence[Record]) -> list[str]:
    """The three plots as HTML (``<figure>`` with an inline PNG, or a note where one can't be drawn)."""
    try:
        import matplotlib  # noqa: F401  (imported here only: ``import llm_compiler`` stays light)
    except ImportError:
        return [_note("The plots need matplotlib: pip install 'llm-compiler[eval]'.")]
    systems = list(dict.fromkeys(str(row["system"]) for row in rows))
    colors = {name: f"C{index % 10}" for index, name in enumerate(systems)}
    gains = {
        name: [(row, g) for row in rows if row["system"] == name and (g := gain(row)) is not None]
        for name in systems
    }
    return [_spread(gains, colors), _predictions(rows, colors), _by_size(gains, colors)]


def _totals_text(gains: dict[str, list[tuple[Record, float]]]) -> str:
    """Each system's total-bytes reduction over the units a plot shows, as a caption line."""
    totals = {
        name: total_improvement([(int(row["oz_size"]), int(row["size"])) for row, _ in pairs])
        for name, pairs in gains.items()
        if pairs
    }
    return (
        "Total bytes vs -Oz: " + ", ".join(f"{name} {percent(value)}" for name, value in totals.items()) + "."
    )


def _label(name: str) -> str:
    """A system name as a matplotlib label: no mathtext, never hidden from the legend."""
    return (" " if name.startswith("_") else "") + name.replace("$", r"\$")


def _axes(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure of its own (no pyplot: no global state, no display) and its one axes."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def _figure_html(figure: Figure, alt: str, caption: str) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def _spread(gains: dict[str, list[tuple[Record, float]]], colors: dict[str, str]) -> str:
    """(a) The distribution of per-unit gains with -Oz backup: a box and the points, per system."""
    shown = {name: [100 * g for _, g in pairs] for name, pairs in gains.items() if pairs}
    if not shown:
        return _note("No unit has a -Oz size: no distribution of gains to plot.")
    figure, axes = _axes(7, 4.2)
    positions = list(range(1, len(shown) + 1))
    axes.boxplot(list(shown.values()), positions=positions, widths=0.5, showfliers=False)
    for position, (name, values) in zip(positions, shown.items(), strict=True):
        jitter = [((k * 0.6180339887) % 1 - 0.5) * 0.3 for k in range(len(values))]
        axes.scatter([position + j for j in jitter], values, s=14, alpha=0.6, color=colors[name], zorder=3)
    axes.set_xticks(positions, labels=[_label(name) for name in shown], rotation=20 if len(shown) > 3 else 0)
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set(title="Per-unit gain over -Oz, with -Oz backup", xlabel="system", ylabel="gain over -Oz (%)")
    medians = ", ".join(
        f"{name} {percent(statistics.median(values) / 100)}" for name, values in shown.items()
    )
    alt = f"Box plot with points of the per-unit gain over -Oz with -Oz backup; medians: {medians}."
    caption = "Each point is a unit: (-Oz size − size) / -Oz size, with -Oz backup. " + _totals_text(gains)
    return _figure_html(figure, alt, caption)


def _predictions(rows: Sequence[Record], colors: dict[str, str]) -> str:
    """(b) A model's predicted size after its list against the measured size, per system."""
    pairs: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        measured, predicted = row.get("measured_after"), row.get("predicted_after")
        if measured is not None and predicted is not None:
            pairs.setdefault(str(row["system"]), []).append((float(measured), float(predicted)))

    if not pairs:
        return _note("No system predicted sizes in this run: no predicted-against-measured plot.")
    figure, axes = _axes(6, 5)
    for name, points in pairs.items():
        measured, predicted = [x for x, _ in points], [y for _, y in points]
        axes.scatter(measured, predicted, s=16, alpha=0.7, color=colors[name], label=_label(name))
    values = [value for points in pairs.values() for point in points for value in point]
    low, high = min(values), max(values)
    axes.plot(
        [low, high], [low, high], color="grey", linewidth=0.8, linestyle="--", label="predicted = measured"
    )
    if low > 0 and high >= 10 * low:
        axes.set_xscale("log")
        axes.set_yscale("log")
    axes.set(
        title="Predicted against measured size after the proposed list",
        xlabel="measured size",
        ylabel="predicted size",
    )
    axes.legend(fontsize="small")
    count = sum(len(points) for points in pairs.values())
    alt = f"Scatter plot of predicted against measured size after the proposed list, {count} units"
    alt += f" of {', '.join(pairs)}, with the line predicted = measured."
    return _figure_html(figure, alt, "Points on the dashed line are exact predictions.")


def _by_size(gains: dict[str, list[tuple[Record, float]]], colors: dict[str, str]) -> str:
    """(c) The gain with -Oz backup against the unit's -Oz size (log scale), per system."""
    if not any(gains.values()):
        return _note("No unit has a -Oz size: no gain-against-size plot.")
    figure, axes = _axes(7, 4.2)
    for name, pairs in gains.items():
        if pairs:
            x = [float(row["oz_size"]) for row, _ in pairs]
            axes.scatter(
                x, [100 * g for _, g in pairs], s=16, alpha=0.7, color=colors[name], label=_label(name)
            )
    axes.set_xscale("log")
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set(
        title="Gain over -Oz against unit size, with -Oz backup",
        xlabel="-Oz size (log scale)",
        ylabel="gain over -Oz (%)",
    )
    axes.legend(fontsize="small")
    alt = "Scatter plot of the gain over -Oz with -Oz backup against the unit's -Oz size"
    alt += f" for {', '.join(gains)}."
    caption = "Each point is a unit; the x axis is logarithmic. " + _totals_text(gains)
    return _figure_html(figure, alt, caption)
