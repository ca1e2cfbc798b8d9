"""Charts as server-rendered SVG (no script, no style attribute: the strict CSP holds).

Each function turns numbers into the geometry a template draws: coordinates are computed
here, labels are plain strings the template escapes like any other. Nothing stored reaches
an SVG attribute except numbers formatted here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WIDTH, HEIGHT = 640, 180
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 28


def _x(i: int, n: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return LEFT + (span * i / (n - 1) if n > 1 else span / 2)


def _y(value: float, top: float) -> float:
    span = HEIGHT - TOP - BOTTOM
    return TOP + span * (1 - (value / top if top else 0))


def _ticks(top: float) -> list[dict[str, Any]]:
    def label(value: float) -> str:
        return f"{value:.2f}" if top <= 1 else f"{value:,.0f}"

    return [{"y": round(_y(top * f, top), 1), "label": label(top * f)} for f in (0, 0.5, 1)]


def value_chart(points: Sequence[tuple[str, float]]) -> dict[str, Any] | None:
    """A line of learned values in [0, 1] over their times (``points`` oldest first), or
    ``None`` without a point: ``polyline`` (the ``points`` attribute), ``dots`` (x, y, the
    time and value as a tooltip), the y ticks and the first and last times."""
    if not points:
        return None
    n = len(points)
    dots = [
        {"x": round(_x(i, n), 1), "y": round(_y(min(max(v, 0.0), 1.0), 1.0), 1),
         "title": f"{at}: {v:.3f}"}
        for i, (at, v) in enumerate(points)
    ]  # fmt: skip
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "polyline": " ".join(f"{d['x']},{d['y']}" for d in dots),
        "dots": dots,
        "ticks": _ticks(1.0),
        "first": points[0][0],
        "last": points[-1][0],
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
    }


def bar_chart(bars: Sequence[tuple[str, int]]) -> dict[str, Any] | None:
    """Bars of counts per label (``bars`` in order), or ``None`` without one: each bar's
    x, y, width and height with its label and value, the y ticks and the axis ends."""
    if not bars:
        return None
    top = max(max(v for _, v in bars), 1)
    n = len(bars)
    slot = (WIDTH - LEFT - RIGHT) / n
    width = max(slot * 0.8, 1.0)
    out = []
    for i, (label, value) in enumerate(bars):
        y = _y(value, top)
        out.append(
            {"x": round(LEFT + slot * i + (slot - width) / 2, 1), "y": round(y, 1),
             "width": round(width, 1), "height": round(HEIGHT - BOTTOM - y, 1),
             "label": label, "value": value}
        )  # fmt: skip
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "bars": out,
        "ticks": _ticks(float(top)),
        "first": bars[0][0],
        "last": bars[-1][0],
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "bottom": HEIGHT - BOTTOM,
    }
