"""Frames: a game's table as a picture, the ``render_mode="rgb_array"`` of every env.

:func:`render_frame` draws a state as an RGB ``numpy.uint8`` array of shape ``(H, W, 3)``
with matplotlib's Agg backend (a :class:`matplotlib.figure.Figure` and its own
``FigureCanvasAgg``: no pyplot, no global figure state; matplotlib is imported on the first
frame, so ``import pipslab`` stays light).  The size is fixed per kind of drawing
(:func:`frame_shape`), so every frame of a game has the same shape and a video of an
episode can be written (``gymnasium.wrappers.RecordVideo``).

* **Dominoes** (``happy``, ``troshin``, ``triple``): the tiles on the table in order with
  their pips (Triple: the line and the spinner's two side lines, the spinner framed), each
  seat's hand — face up when shown, face down (its size) otherwise —, the boneyard's size,
  the open ends, Triple's winnings and penalties, a match's scores, and the result at the
  end.  The seat drawn at the bottom (``seat``) is "you".
* **Backgammon**: the 24 points, the checkers (a number on a stack of more than five), the
  bar, the borne-off trays, the roll (dice already played faded), whose turn, the pip
  counts and the result.  ``seat`` is drawn at the bottom (default seat 0, X, as in the
  text render).
* **Any other game** (one registered with :func:`~pipslab.envs.game.register_game`): its
  text render drawn as monospace text.

Hidden information stays hidden exactly as in the ``ansi`` render: ``viewer`` is the seat
whose hand is shown (``None``: every hand — the end of a game, or ``reveal=True``; ``-1``:
no hand, only what every seat sees).  A domino frame is drawn from
``state.observe(viewer)`` — that seat's view — and, only when ``viewer`` is ``None``, the
hands of the state; the boneyard's tiles are never drawn.  A generic game's frame is its
``render(state, viewer=viewer)`` text (when its render takes a ``viewer``).
"""
from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import PipslabError
from .game import Game, get_game

__all__ = ["render_frame", "frame_shape", "frame_kind", "text_frame", "DPI", "SHAPES"]

DPI = 100
#: (height, width) of a frame per kind of drawing (multiples of 16: video encoders' blocks)
SHAPES: Dict[str, Tuple[int, int]] = {"dominoes": (640, 960), "backgammon": (640, 960), "text": (480, 800)}

_SANS = "DejaVu Sans"
_MONO = "DejaVu Sans Mono"
_PT = 72.0 / DPI          # points per pixel


# ------------------------------------------------------------------ public
def frame_kind(game: Game) -> str:
    """``"dominoes"``, ``"backgammon"`` or ``"text"``: how ``game``'s frames are drawn."""
    return game.family if game.family in ("dominoes", "backgammon") else "text"


def frame_shape(game) -> Tuple[int, int, int]:
    """The ``(H, W, 3)`` shape of every frame of ``game`` (a name or a :class:`Game`)."""
    h, w = SHAPES[frame_kind(_game(game))]
    return h, w, 3


def render_frame(game, state, viewer: Optional[int] = None, seat: Optional[int] = None) -> np.ndarray:
    """``state`` of ``game`` (a name or a :class:`Game`) as an RGB ``uint8[H, W, 3]`` frame.

    ``viewer``: the seat whose hidden information the frame shows (``None``: everything;
    ``-1``: nobody's — only what every seat sees).  ``seat``: the seat drawn at the bottom
    as "you" (default: ``viewer`` when it is a seat).  See the module docstring."""
    game = _game(game)
    if seat is None and viewer is not None and viewer >= 0:
        seat = viewer
    kind = frame_kind(game)
    if kind == "dominoes":
        scene = _domino_scene(game, state, viewer, seat)
        if scene is not None:
            return _draw(SHAPES["dominoes"], _TABLE, lambda ax: _draw_dominoes(ax, scene))
    elif kind == "backgammon" and hasattr(state, "position_from"):
        return _draw(SHAPES["backgammon"], _WOOD, lambda ax: _draw_backgammon(ax, state, seat or 0))
    return text_frame(_game_text(game, state, viewer), SHAPES["text"] if kind == "text" else SHAPES[kind])


def text_frame(text: str, shape: Tuple[int, int] = SHAPES["text"]) -> np.ndarray:
    """``text`` drawn as monospace lines on a fixed-size frame (the font shrinks to fit)."""
    h, w = shape
    lines = str(text).expandtabs(4).split("\n") or [""]
    width = max(1, max(len(line) for line in lines))
    margin = 16
    # DejaVu Sans Mono: a character is 0.602 em wide; a line 1.25 em tall
    px = min(22.0, (w - 2 * margin) / (0.61 * width), (h - 2 * margin) / (1.25 * len(lines)))

    def paint(ax):
        ax.text(margin, margin, "\n".join(lines), fontsize=max(px, 1.0) * _PT, family=_MONO, color="#f3f1ea",
                va="top", ha="left", linespacing=1.25, parse_math=False, usetex=False)

    return _draw(shape, "#1e2b26", paint)


# ------------------------------------------------------------------ plumbing
def _game(game) -> Game:
    game = get_game(game) if isinstance(game, str) else game
    if not isinstance(game, Game):
        raise PipslabError(f"a frame is drawn for a Game definition, got {type(game).__name__}")
    return game


def _takes_viewer(fn) -> bool:
    try:
        return "viewer" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _game_text(game: Game, state, viewer) -> str:
    if _takes_viewer(game.render):
        return game.render(state, viewer=viewer)
    return game.render(state)


_CANVASES = threading.local()   # per thread: (height, width) -> (figure, canvas, axes), reused


def _draw(shape: Tuple[int, int], background: str, paint) -> np.ndarray:
    """``paint(ax)`` on a clean figure of ``shape`` (pixels; y grows downward), its pixels.

    One figure per size and thread is kept and cleared between frames (its own
    ``FigureCanvasAgg``, never pyplot's): a fresh one per frame costs a third more."""
    h, w = shape
    cache = getattr(_CANVASES, "figures", None)
    if cache is None:
        cache = _CANVASES.figures = {}
    if shape not in cache:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(w / DPI, h / DPI), dpi=DPI)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(0, w)
        ax.set_ylim(h, 0)
        ax.set_autoscale_on(False)
        cache[shape] = (fig, canvas, ax)
    fig, canvas, ax = cache[shape]
    fig.set_facecolor(background)
    try:
        paint(ax)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if rgba.shape[:2] != (h, w):   # pragma: no cover  (a figure size off by a rounding)
            raise PipslabError(f"frame drawn at {rgba.shape[:2]}, expected {(h, w)}")
        return np.array(rgba[..., :3], dtype=np.uint8)
    finally:
        for artist in list(ax.texts) + list(ax.collections) + list(ax.patches) + list(ax.lines):
            artist.remove()


def _text(ax, x, y, s, px=14, color="#f3f1ea", weight="normal", ha="left", va="top", family=_SANS):
    ax.text(x, y, s, fontsize=px * _PT, color=color, fontweight=weight, ha=ha, va=va, family=family,
            parse_math=False, usetex=False, clip_on=True)


class _Ink:
    """Shapes collected while painting and drawn in a few collections (fast)."""

    def __init__(self):
        self.boxes: List[tuple] = []     # (x, y, w, h, face, edge, linewidth)
        self.segments: List[tuple] = []  # ((x0, y0), (x1, y1)), colour
        self.dots: List[tuple] = []      # (x, y, r, colour)

    def box(self, x, y, w, h, face, edge="none", lw=1.0, rounded=3.0):
        self.boxes.append((x, y, w, h, face, edge, lw, rounded))

    def line(self, x0, y0, x1, y1, color="#555555"):
        self.segments.append((((x0, y0), (x1, y1)), color))

    def dot(self, x, y, r, color):
        self.dots.append((x, y, r, color))

    def flush(self, ax):
        from matplotlib.collections import LineCollection, PatchCollection
        from matplotlib.patches import FancyBboxPatch, Rectangle

        if self.boxes:
            patches = [FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={min(rnd, w / 3, h / 3)}")
                       if rnd else Rectangle((x, y), w, h) for x, y, w, h, _f, _e, _l, rnd in self.boxes]
            ax.add_collection(PatchCollection(patches, facecolors=[b[4] for b in self.boxes],
                                              edgecolors=[b[5] for b in self.boxes],
                                              linewidths=[b[6] for b in self.boxes], match_original=False))
        if self.segments:
            ax.add_collection(LineCollection([s for s, _ in self.segments], colors=[c for _, c in self.segments],
                                             linewidths=1.0))
        if self.dots:
            xs, ys, rs, cs = zip(*self.dots)
            ax.scatter(xs, ys, s=[(2 * r * _PT) ** 2 for r in rs], c=list(cs), linewidths=0, marker="o")
        self.boxes, self.segments, self.dots = [], [], []


# ------------------------------------------------------------------ dominoes
_TABLE = "#2e6b4f"
_INK = "#f3f1ea"
_DIM = "#cfe3d8"
_GOLD = "#ffe98a"
_FACE, _BACK = "#fffdf6", "#24493f"
# the 3x3 grid spots of 0..6 pips (column, row), as on the play page
_SPOTS = {0: (), 1: ((1, 1),), 2: ((0, 0), (2, 2)), 3: ((0, 0), (1, 1), (2, 2)),
          4: ((0, 0), (0, 2), (2, 0), (2, 2)), 5: ((0, 0), (0, 2), (1, 1), (2, 0), (2, 2)),
          6: ((0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2))}


@dataclass(frozen=True)
class _DominoScene:
    """What a domino frame shows — one seat's view and the hands turned up, nothing else."""

    view: object                  # a DominoView (its ``hand`` is the viewer's, or 0)
    hands: Dict[int, int]         # seat -> hand mask, for the hands shown face up
    seat: Optional[int]           # the seat drawn at the bottom ("you"), None: none
    result: str                   # the result line at the end, else ""


def _domino_scene(game: Game, state, viewer, seat) -> Optional[_DominoScene]:
    from .dominoes.common import DominoView
    from .dominoes.match import TroshinMatch

    base = state.hand if isinstance(state, TroshinMatch) else state
    players = state.variant.players
    if viewer is None:                       # everything: the hands are turned up (or reveal=True)
        view = state.observe(seat if seat is not None else base.current_player)
        hands = {p: int(base.hands[p]) for p in range(players)}
    elif viewer >= 0:
        view = state.observe(viewer)
        hands = {viewer: int(view.hand)}
    else:                                    # nobody's hand: a view with its hand blanked
        view = state.observe(0)
        view = replace(view, hand=0, lucky=-2 if view.lucky >= 0 else view.lucky)
        hands = {}
    if not isinstance(view, DominoView):
        return None
    if seat is not None and not 0 <= seat < players:
        seat = None
    return _DominoScene(view, hands, seat, _domino_result(game, state) if state.is_terminal else "")


def _domino_result(game: Game, state) -> str:
    o = game.outcome(state)
    v = state.variant
    if o.draw or not o.winners:
        who = "a draw"
    elif getattr(v, "pairs", False) and len(o.winners) == 2:
        who = f"pair {o.winners[0]}+{o.winners[1]} wins"
    else:
        who = ("seat " if len(o.winners) == 1 else "seats ") + ", ".join(map(str, o.winners)) \
              + (" wins" if len(o.winners) == 1 else " win")
    parts = [f"game over{' (blocked)' if o.extra.get('blocked') else ''}: {who}"]
    if o.pips_left is not None:
        parts.append("pips left " + " / ".join(map(str, o.pips_left)))
    if o.points is not None and tuple(o.points) != tuple(o.returns):
        parts.append("points " + " / ".join(str(int(p)) if float(p).is_integer() else f"{p:g}" for p in o.points))
    return "; ".join(parts)


def _count(n: int) -> str:
    return f"{n} tile" + ("" if n == 1 else "s")


def _tiles_of(mask: int) -> List[Tuple[int, int]]:
    from .dominoes.tiles import TILES
    return [TILES[t] for t in range(len(TILES)) if mask >> t & 1]


def _tile(ink: _Ink, x, y, a, b, s, upright: bool, face_up: bool = True, edge: Optional[str] = None):
    """A tile with its top-left corner at (x, y): ``s`` by ``2s`` upright (``a`` on top),
    ``2s`` by ``s`` lying (``a`` on the left); face down: a plain back."""
    w, h = (s, 2 * s) if upright else (2 * s, s)
    if not face_up:
        ink.box(x, y, w, h, _BACK, edge or _DIM, 1.0)
        return
    ink.box(x, y, w, h, _FACE, edge or "#333333", 2.5 if edge else 1.0)
    if upright:
        ink.line(x + 3, y + s, x + s - 3, y + s)
        halves = ((a, x, y), (b, x, y + s))
    else:
        ink.line(x + s, y + 3, x + s, y + s - 3)
        halves = ((a, x, y), (b, x + s, y))
    for n, hx, hy in halves:
        for i, j in _SPOTS[n]:
            ink.dot(hx + s * (0.22 + 0.28 * i), hy + s * (0.22 + 0.28 * j), s * 0.085, "#222222")


def _row_layout(tiles: Sequence[Tuple[int, int]], width: float, s: float, gap: float = 3.0):
    """Where a row of table tiles goes (doubles crosswise), wrapping at ``width``:
    ``[(dx, row, upright)]`` and the number of rows."""
    out, x, row = [], 0.0, 0
    for a, b in tiles:
        w = s if a == b else 2 * s
        if x > 0 and x + w > width:
            x, row = 0.0, row + 1
        out.append((x, row, a == b))
        x += w + gap
    return out, row + 1


def _fit_table(groups, width: float, height: float, label_h: float) -> float:
    """The largest tile size (8..32 px) at which every group's rows fit in ``height``, and
    the height they take."""
    for s in range(32, 7, -1):
        total = sum(label_h + _row_layout(tiles, width, s)[1] * (2 * s + 6) for _, tiles, _ in groups)
        if total <= height or s == 8:
            return float(s), total
    raise AssertionError("unreachable")


def _hand_row(ink: _Ink, x0, y0, width, mask: Optional[int], count: int, s_max: float) -> None:
    """A hand laid upright from (x0, y0): its tiles face up (``mask``) or ``count`` backs."""
    n = count if mask is None else bin(mask).count("1")
    if not n:
        return
    s = max(6.0, min(s_max, width / n - 6))
    step = s + max(2.0, min(6.0, s / 4))
    if mask is None:
        for i in range(n):
            _tile(ink, x0 + i * step, y0, 0, 0, s, True, face_up=False)
    else:
        for i, (a, b) in enumerate(_tiles_of(mask)):
            _tile(ink, x0 + i * step, y0, a, b, s, True)


def _draw_dominoes(ax, scene: _DominoScene) -> None:
    H, W = SHAPES["dominoes"]
    v = scene.view
    var = v.variant
    n = var.players
    ink = _Ink()
    triple = var.layout == "spinner"
    over = v.is_terminal

    def seat_name(p):
        if p == scene.seat:
            return f"seat {p} (you)"
        partner = var.pairs and scene.seat is not None and p == (scene.seat + 2) % 4
        return f"seat {p}" + (" (partner)" if partner else "")

    # header: the variant, a match's score, whose turn
    head = var.name
    if v.match is not None:
        m = v.match
        sides = ("pair 0+2", "pair 1+3") if var.pairs else tuple(f"seat {p}" for p in range(n))
        head += (f"   match to {m.target}, hand {m.hand_index + (0 if over else 1)}: "
                 + ", ".join(f"{side} {score}" for side, score in zip(sides, m.scores)))
    _text(ax, 16, 10, head, px=17, weight="bold")
    turn = "game over" if over else f"{seat_name(v.current_player)} to play"
    _text(ax, W - 16, 10, turn, px=15, color=_GOLD, ha="right")
    # the public facts: ends, boneyard, passes / count
    if v.left < 0:
        ends = "table empty"
    elif triple:
        names = ("left", "right", "side 1", "side 2")
        ends = "ends " + "  ".join(f"{nm} {e}" for nm, e in zip(names, v.ends) if e >= 0)
        ends += f";  count {sum(e for e in v.ends if e >= 0)}"
        if v.spinner >= 0:
            ends += f";  spinner {v.spinner}-{v.spinner}"
    else:
        ends = f"ends {v.left} | {v.right}"
    facts = [ends, f"boneyard: {_count(v.boneyard_size)}" + ("" if var.draw else " (out of play)")]
    if triple:
        facts.append(f"draws this turn {v.turn_draws}")
        if v.lucky >= 0:
            facts.append("lucky tile {}-{} to place".format(*_tiles_of(1 << v.lucky)[0]))
        elif v.lucky == -2:
            facts.append("a lucky tile to place")
    elif v.passes:
        facts.append(f"passes in a row {v.passes}")
    _text(ax, 16, 38, "     ".join(facts), px=14, color=_DIM)

    # the other seats (every seat when there is no "you"), one row each
    y = 64
    for p in range(n):
        if p == scene.seat:
            continue
        label = f"{seat_name(p)}: {_count(v.hand_sizes[p])}"
        mark = "▶ " if p == v.current_player and not over else ""
        _text(ax, 16, y + 4, mark + label, px=14, weight="bold" if mark else "normal")
        if triple and v.winnings:
            _text(ax, 16, y + 22, f"winnings {v.winnings[p]}, penalties {v.penalties[p]}", px=12, color=_DIM)
        shown = scene.hands.get(p)
        _hand_row(ink, 270, y + 4, W - 286, shown, v.hand_sizes[p], 16)
        y += 46

    # the table
    bottom = H - 40 if scene.seat is None else H - 138
    top = y + 6
    groups = []
    if v.line is not None and len(v.line):
        groups.append(("the line, left to right", tuple(v.line), True))
        if triple and v.spinner >= 0:
            for k, arm in enumerate(v.arms):
                groups.append((f"side {k + 1}, from the spinner outward", tuple(arm), False))
    if groups:
        label_h = 18.0
        s, total = _fit_table(groups, W - 32, bottom - top, label_h)
        yy = top + max(0.0, (bottom - top - total) / 2)
        spin_marked = False
        for label, tiles, is_line in groups:
            _text(ax, 16, yy, label, px=12, color=_DIM)
            yy += label_h
            layout, rows = _row_layout(tiles, W - 32, s)
            for (a, b), (dx, row, upright) in zip(tiles, layout):
                edge = None
                if is_line and triple and not spin_marked and a == b == v.spinner:
                    edge, spin_marked = "#d4a000", True
                ty = yy + row * (2 * s + 6) + (0 if upright else s / 2)
                _tile(ink, 16 + dx, ty, a, b, s, upright, edge=edge)
            yy += rows * (2 * s + 6)
    elif v.left >= 0:
        _text(ax, W / 2, (top + bottom) / 2, f"{bin(v.table).count('1')} tiles on the table "
              f"(their order is not known); open ends {v.left} | {v.right}", px=15, color=_DIM, ha="center",
              va="center")
    else:
        _text(ax, W / 2, (top + bottom) / 2, "(the table is empty)", px=15, color=_DIM, ha="center", va="center")

    # "you": the bottom seat's hand
    if scene.seat is not None:
        p = scene.seat
        mark = "▶ " if p == v.current_player and not over else ""
        label = f"{mark}{seat_name(p)}: " + ("your hand" if p in scene.hands else _count(v.hand_sizes[p]))
        if triple and v.winnings:
            label += f"     winnings {v.winnings[p]}, penalties {v.penalties[p]}"
        _text(ax, 16, H - 132, label, px=15, weight="bold")
        shown = scene.hands.get(p)
        if shown is not None and not shown:
            _text(ax, 16, H - 104, "(no tiles left)", px=14, color=_DIM)
        _hand_row(ink, 16, H - 108, W - 32, shown, v.hand_sizes[p], 30)
    if scene.result:
        _text(ax, 16, H - 30, scene.result, px=15, color=_GOLD, weight="bold")
    ink.flush(ax)


# ------------------------------------------------------------------ backgammon
_WOOD = "#6b4226"
_FELT = "#e8d8b0"
_CHECKER = {0: ("#faf6ec", "#777777", "#222222"), 1: ("#2b2b2b", "#000000", "#ffffff")}   # face, edge, text
_SEAT_NAMES = ("X", "O")


def _draw_backgammon(ax, state, bottom: int) -> None:
    H, W = SHAPES["backgammon"]
    ink = _Ink()
    bottom = bottom if bottom in (0, 1) else 0
    top_seat = 1 - bottom
    p = state.position_from(bottom)      # the bottom seat's checkers positive, moving 24 -> 1
    M, TOP, BOT = 24, 32, H - 84         # board: x from M, y from TOP to BOT
    TRAY, BAR = 72, 52
    inner = W - 2 * M - TRAY
    pw = (inner - BAR) / 12
    half = (BOT - TOP) / 2
    bar_x = M + 6 * pw
    board = _Ink()
    board.box(M, TOP, inner, BOT - TOP, _FELT, rounded=0)
    board.box(bar_x, TOP, BAR, BOT - TOP, _WOOD, rounded=0)
    tx = W - M - TRAY + 10
    tw = TRAY - 10
    board.box(tx, TOP, tw, BOT - TOP, "#4a2d1a")
    board.flush(ax)
    r = min(pw / 2 - 2, (half - 16) / 10)

    def point_x(q):
        if q <= 6:
            return M + inner - (q - 0.5) * pw
        if q <= 12:
            return M + (12.5 - q) * pw
        if q <= 18:
            return M + (q - 12.5) * pw
        return M + inner - (24.5 - q) * pw

    from matplotlib.patches import Polygon
    from matplotlib.collections import PatchCollection

    tris, colours = [], []
    for q in range(1, 25):
        cx = point_x(q)
        up = q <= 12            # the bottom row's points stand on the bottom edge
        base = BOT if up else TOP
        tip = base - (half - 14) if up else base + (half - 14)
        tris.append(Polygon([(cx - pw / 2, base), (cx + pw / 2, base), (cx, tip)], closed=True))
        colours.append("#a0522d" if q % 2 else "#2f5d50")
        _text(ax, cx, BOT + 4 if up else TOP - 4, str(q), px=12, ha="center", va="top" if up else "bottom")
    ax.add_collection(PatchCollection(tris, facecolors=colours, edgecolors="none"))

    labels = []   # (x, y, text, colour) drawn over the checkers

    def stack(cx, edge_y, count, owner, up, always_label=False):
        face, rim, ink_colour = _CHECKER[owner]
        for i in range(min(count, 5)):
            cy = edge_y - r - 2 * r * i if up else edge_y + r + 2 * r * i
            ink.dot(cx, cy, r, rim)
            ink.dot(cx, cy, r - 1.5, face)
        if count > 5 or always_label:
            i = min(count, 5) - 1
            cy = edge_y - r - 2 * r * i if up else edge_y + r + 2 * r * i
            labels.append((cx, cy, str(count), ink_colour))

    for q in range(1, 25):
        v = p[q]
        if v:
            stack(point_x(q), BOT if q <= 12 else TOP, abs(v), bottom if v > 0 else top_seat, q <= 12)
    bx = bar_x + BAR / 2
    if p.bar:
        stack(bx, (TOP + BOT) / 2 + 8, p.bar, bottom, False, True)
    if p.opp_bar:
        stack(bx, (TOP + BOT) / 2 - 8, p.opp_bar, top_seat, True, True)
    # the trays: checkers borne off, the top seat's above, the bottom seat's below
    for owner, n, y0, down in ((top_seat, p.opp_borne_off, TOP + 22, True), (bottom, p.borne_off, BOT - 22, False)):
        face, rim, _ = _CHECKER[owner]
        for i in range(n):
            yy = y0 + (i * 9 if down else -i * 9) - (0 if down else 7)
            ink.box(tx + 6, yy, tw - 12, 7, face, rim, 0.8, rounded=2.0)
    _text(ax, tx + tw / 2, TOP + 4, f"off {p.opp_borne_off}", px=12, ha="center")
    _text(ax, tx + tw / 2, BOT - 4, f"off {p.borne_off}", px=12, ha="center", va="bottom")

    # the roll of the seat on roll: dice left to play bright, the ones played faded
    live = not state.is_terminal and not state.is_chance and state.roll
    if live:
        mover = state.current_player
        face, rim, pip = _CHECKER[mover]
        roll = list(state.roll)
        dice = [roll[0]] * 4 if len(roll) == 2 and roll[0] == roll[1] else roll
        left = list(state.dice)
        size = 40
        dx = M + 9 * pw + BAR - len(dice) * (size + 8) / 2
        dy = (TOP + BOT) / 2 - size / 2
        for d in dice:
            played = d not in left
            if not played:
                left.remove(d)
            colours = ("#d9cfb5", "#b3a98f", "#9a9078") if played else (face, rim, pip)   # played: faded
            ink.box(dx, dy, size, size, colours[0], colours[1], 1.5)
            for i, j in _SPOTS[d]:
                ink.dot(dx + size * (0.22 + 0.28 * i), dy + size * (0.22 + 0.28 * j), size * 0.085, colours[2])
            dx += size + 8

    def who(s):
        return f"{_SEAT_NAMES[s]} (seat {s})"

    if state.is_terminal:
        res = state.result()
        kind = "backgammon" if res["backgammon"] else "gammon" if res["gammon"] else "single game"
        status = f"game over: {who(res['winner'])} wins a {kind} ({res['points']} point{'s' * (res['points'] > 1)})"
    elif state.is_chance:
        status = "opening roll next" if state.opening else f"{who(state.current_player)} to roll"
    else:
        status = f"{who(state.current_player)} on roll: {state.roll[0]}-{state.roll[1]}" + \
                 (f", dice left {'-'.join(map(str, state.dice))}" if state.dice else ", no dice left")
    ink.flush(ax)
    for x, y, s, c in labels:
        _text(ax, x, y, s, px=15, color=c, weight="bold", ha="center", va="center")
    _text(ax, M, H - 54, status, px=16, color="#ffe98a" if state.is_terminal else _INK, weight="bold")
    _text(ax, M, H - 10, f"pips {_SEAT_NAMES[bottom]} {p.pip_count()}, {_SEAT_NAMES[top_seat]} "
          f"{p.opp_pip_count()}    {_SEAT_NAMES[bottom]} (seat {bottom}) plays from 24 to 1 at the bottom    "
          f"Position ID {state.position.id}", px=12, color=_DIM, va="bottom")
    _text(ax, W - 6, 8, who(top_seat), px=13, color=_INK, weight="bold", ha="right")
    _text(ax, W - 6, BOT + 4, who(bottom), px=13, color=_INK, weight="bold", ha="right")
