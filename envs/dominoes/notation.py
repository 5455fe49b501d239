"""Domino position strings: human-writable, parsed with clear errors, round-tripping.

Format: the variant name, then ``key=value`` fields, separated by ``;``::

    happy-block; turn=1; passes=0; ends=6|3; hands=4-4 2-3 / 0-1 1-1 2-2; boneyard=-

* ``hands``    every seat's tiles, seat 0 first, seats separated by ``/`` (required).
* ``turn``     the seat to move (default 0).
* ``passes``   passes in a row just before this position (default 0).
* ``line``     the tiles on the table from left to right, each written as it lies
               (``6-6 6-0`` — touching halves equal), or ``-`` for an empty table; or
* ``ends``     just the open ends ``LEFT|RIGHT`` when the line itself does not matter.
  Give ``line`` or ``ends``, not both; neither means an empty table.
* ``boneyard`` the boneyard in draw order, next draw first (``-`` or omitted: empty).
  In block mode it is out of play.
Tiles listed nowhere are on the table (with ``ends``) — every one of the 28 tiles is in
exactly one place.  A Happy game on a smaller set (``happy-block-d2``: the double-2 set,
``variants.happy``) uses the same tile names; the tiles outside its set are nowhere and
may not be written.  Tiles are written ``a-b`` (``a:b`` is accepted).

Troshin (``troshin-2``, ``troshin-3``, ``troshin-4``, ``troshin-4-pairs``, ``troshin-120``)
uses the same fields; a **match** position adds

* ``match``    the cumulative score of every side (each seat, or each pair: team 0 = seats
               0+2 first), separated by ``/`` — ``match=45 / 80``;
* ``hand``     hands finished so far (default 0); ``target`` the points that win (100).

Triple (``triple-2``, ``triple-3``, ``triple-4``) has a spinner and scores::

    triple-4; turn=0; line=2-2 2-5 5-5* 5-6 6-1 1-3 3-4 4-1 1-0; arms=5-3 3-3 3-6 6-6 / 5-1;
      hands=…; boneyard=…; winnings=8 / 0 / 5 / 0; penalties=0 / 0 / 0 / 5; draws=0

* ``line``     the main line left to right; the spinner is marked ``*`` (every double on
               the table implies a spinner, so one must be marked when any lies there);
* ``arms``     the spinner's two side lines, each written outward from the spinner
               (``5-3 3-3`` on a 5-5 spinner), separated by ``/``; ``-`` for a side line
               with no tile yet;
* or ``ends=L|R|S1|S2`` (``-`` for a side line not started) with ``spinner=N`` (or ``-``);
* ``winnings`` and ``penalties`` — both score columns, every seat, ``/``-separated
  (default 0); ``draws`` — draws made this turn by the seat to move (default 0);
  ``lucky`` — a lucky drawn tile that must be placed now (in the mover's hand).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Tuple

from pipslab.envs.errors import PipslabError, PositionError, excerpt

from .common import opening_tile
from .line import DominoState
from .match import TroshinMatch
from .triple import TripleState
from .tiles import (
    FULL_SET, IS_DOUBLE, N_TILES, SUIT, TILE_ID, TILES, format_tiles, parse_oriented, parse_tile, tile_name,
    tiles_of,
)
from .variants import variant_by_name

_KEYS = ("turn", "passes", "line", "ends", "hands", "boneyard")
_MATCH_KEYS = ("match", "hand", "target")
_TRIPLE_KEYS = ("arms", "spinner", "winnings", "penalties", "draws", "lucky")


def _columns(text: str, key: str, n: int):
    parts = [p.strip() for p in text.split("/")]
    if len(parts) != n:
        raise PositionError(f"{key}={excerpt(text)}: expected {n} numbers separated by '/', got {len(parts)}")
    out = []
    for part in parts:
        value = _int(part, key)
        if value < 0:
            raise PositionError(f"{key}={excerpt(text)}: scores are not negative")
        out.append(value)
    return out


def _oriented_chain(text: str, claim, where: str, start: int = -1):
    """Tiles written as they lie, touching halves equal; ``start``: the number the first must show."""
    chain = []
    spinner_at = -1
    tokens = text.replace(",", " ").split()
    if not tokens:
        raise PositionError(f"{where}={excerpt(text)} lists no tiles: write - for none")
    for tok in tokens:
        marked = tok.endswith("*")
        a, b = parse_oriented(tok[:-1] if marked else tok)
        tile = TILE_ID[(a, b)]
        claim(tile, where)
        if marked:
            if spinner_at >= 0:
                raise PositionError(f"{where}: more than one tile is marked '*' as the spinner")
            if a != b:
                raise PositionError(f"{where}: the spinner {tok} is not a double")
            spinner_at = len(chain)
        prev = chain[-1][1] if chain else start
        if prev >= 0 and prev != a:
            if chain:
                raise PositionError(f"{where}: {tok} does not join {chain[-1][0]}-{chain[-1][1]} "
                                    f"({chain[-1][1]} against {a})")
            raise PositionError(f"{where}: {tok} does not join the spinner ({start} against {a})")
        chain.append((a, b))
    return chain, spinner_at


def _tiles(text: str, where: str):
    text = text.strip()
    if text in ("", "-"):
        return []
    try:
        return [parse_tile(tok) for tok in text.replace(",", " ").split()]
    except PositionError as exc:
        raise PositionError(f"{where}: {exc}") from None


def _digit(text: str) -> bool:
    """One ASCII digit (``str.isdigit`` also takes '²', which ``int`` refuses)."""
    return len(text) == 1 and "0" <= text <= "9"


def _int(text: str, key: str) -> int:
    t = text.strip()
    body = t[1:] if t[:1] in "+-" else t
    if not body or not body.isascii() or not body.isdigit() or len(body) > 9:
        raise PositionError(f"{key}={excerpt(text)} is not a whole number")
    return int(t)


def parse_position(text: str, rng=None):
    """Parse a position string (raises PositionError): a :class:`DominoState`, a
    :class:`pipslab.envs.dominoes.triple.TripleState` for Triple, or a
    :class:`pipslab.envs.dominoes.match.TroshinMatch` when it has ``match=`` (its later hands
    are chance nodes, dealt by ``apply_chance``; a finished hand is counted into ``match=``'s
    scores, so the match is then a chance node or over)."""
    if not isinstance(text, str) or not text.strip():
        raise PositionError("empty position string")
    parts = [p.strip() for p in text.strip().split(";")]
    try:
        variant = variant_by_name(parts[0])
    except PipslabError as exc:
        raise PositionError(str(exc)) from None
    fields = {}
    for part in parts[1:]:
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise PositionError(f"field {excerpt(part)} is not key=value")
        keys = _KEYS + _LAYOUTS[variant.layout].keys + (_MATCH_KEYS if variant.scoring == "troshin" else ())
        if key not in keys:
            raise PositionError(f"unknown field {excerpt(key)} for {variant.name}; fields: {', '.join(keys)}")
        if key in fields:
            raise PositionError(f"field {excerpt(key)} given twice")
        fields[key] = value.strip()
    if "hands" not in fields:
        raise PositionError("missing field 'hands' (seats separated by '/')")
    hand_texts = fields["hands"].split("/")
    if len(hand_texts) != variant.players:
        raise PositionError(f"{variant.name} has {variant.players} seats but hands lists {len(hand_texts)}")
    seen = {}

    def claim(t, where):
        if t in seen:
            raise PositionError(f"tile {tile_name(t)} appears twice ({seen[t]} and {where})")
        seen[t] = where

    hands = []
    for seat, ht in enumerate(hand_texts):
        m = 0
        for t in _tiles(ht, f"hand of seat {seat}"):
            claim(t, f"hand of seat {seat}")
            m |= 1 << t
        hands.append(m)
    boneyard = _tiles(fields.get("boneyard", "-"), "boneyard")
    for t in boneyard:
        claim(t, "boneyard")
    outside = [t for t in seen if not variant.tile_set >> t & 1]
    if outside:
        raise PositionError(f"{variant.name} plays the double-{variant.max_pip} set, which has no "
                            f"{format_tiles(sorted(outside))}")
    turn = _int(fields.get("turn", "0"), "turn")
    if not 0 <= turn < variant.players:
        raise PositionError(f"turn={turn} is not a seat of {variant.name} (0..{variant.players - 1})")
    passes = _int(fields.get("passes", "0"), "passes")
    return _LAYOUTS[variant.layout].parse(variant, fields, hands, boneyard, seen, claim, turn, passes, rng)


def _parse_line(variant, fields, hands, boneyard, seen, claim, turn, passes, rng):
    if not 0 <= passes <= variant.players:
        raise PositionError(f"passes={passes}: must be 0..{variant.players} "
                            f"({variant.players} in a row is a blocked, finished game)")
    if passes and variant.draw and boneyard:
        raise PositionError(f"passes={passes} with {len(boneyard)} tiles in the boneyard: in {variant.name} a seat "
                            "passes only once the boneyard is empty (it draws first)")
    if "line" in fields and "ends" in fields:
        raise PositionError("give 'line' or 'ends', not both")
    held = 0
    for t in seen:
        held |= 1 << t
    left = right = -1
    line = ()
    table = variant.tile_set & ~held
    if "line" in fields and fields["line"] not in ("", "-"):
        oriented = []
        tokens = fields["line"].replace(",", " ").split()
        if not tokens:
            raise PositionError(f"line={excerpt(fields['line'])} lists no tiles: write line=- for an empty table")
        for tok in tokens:
            a, b = parse_oriented(tok)
            t = TILE_ID[(a, b)]
            claim(t, "line")
            if oriented and oriented[-1][1] != a:
                raise PositionError(f"line: {tok} does not join {oriented[-1][0]}-{oriented[-1][1]} "
                                    f"({oriented[-1][1]} against {a})")
            oriented.append((a, b))
        line = tuple(oriented)
        left, right = line[0][0], line[-1][1]
        table = 0
        for t in seen:
            if seen[t] == "line":
                table |= 1 << t
        unplaced = variant.tile_set & ~held & ~table
        if unplaced:
            raise PositionError(f"tiles in no hand, boneyard or line: {format_tiles(tiles_of(unplaced))}")
    elif "ends" in fields:
        ends = fields["ends"].replace(" ", "").split("|")
        if len(ends) != 2 or not all(_digit(e) and 0 <= int(e) <= 6 for e in ends):
            raise PositionError(f"ends={excerpt(fields['ends'])}: expected two numbers 0-6 like '6|3'")
        left, right = int(ends[0]), int(ends[1])
        line = None
        for e in (left, right):
            if not table & SUIT[e]:
                raise PositionError(f"ends show {e}, but no tile on the table carries {e}")
    else:
        if table:
            raise PositionError(f"the table is empty but these tiles are nowhere: {format_tiles(tiles_of(table))}")
    state = DominoState(variant, hands, boneyard, left=left, right=right, current_player=turn,
                        passes=passes, table=table, line=line, from_deal=left < 0)
    if left < 0:
        seat, tile = opening_tile(variant, hands)
        if seat >= 0 and seat != turn:
            raise PositionError(f"seat {seat} opens with {tile_name(tile)} under {variant.name}'s rule, "
                                f"but turn={turn}")
        state.opening = tile
        if passes:
            raise PositionError("passes must be 0 on an empty table")
    empty = [seat for seat, h in enumerate(hands) if not h]
    if len(empty) > 1:
        raise PositionError(f"seats {empty} all have empty hands: only one player can go out")
    if empty:
        state._finish(winner=empty[0], blocked=False)
    elif passes == variant.players:
        state._finish(winner=None, blocked=True)
    if "match" in fields:
        return _parse_match(variant, fields, state)
    for key in ("hand", "target"):
        if key in fields:
            raise PositionError(f"field {excerpt(key)} belongs to a match position: give 'match' too")
    return state


def _parse_match(variant, fields, state):
    scores = _columns(fields["match"], "match", variant.n_teams)
    hand_index = _int(fields.get("hand", "0"), "hand")
    target = _int(fields.get("target", str(variant.match_target)), "target")
    if hand_index < 0 or target < 1:
        raise PositionError("hand must be 0 or more and target at least 1")
    if max(scores) >= target and not state.is_terminal:
        raise PositionError(f"match={excerpt(fields['match'])}: a side already has {target} points, so the match "
                            "is over, but this hand is not finished")
    if sorted(scores)[-2:].count(max(scores)) > 1 and max(scores) >= target:
        raise PositionError(f"match={excerpt(fields['match'])}: two sides cannot both win the match")
    return TroshinMatch(variant, state, scores=scores, hand_index=hand_index, target=target)


def _parse_triple(variant, fields, hands, boneyard, seen, claim, turn, passes, rng):
    n = variant.players
    if passes < 0:
        raise PositionError(f"passes={passes} is negative")
    # while the boneyard lasts a seat passes only after drawing this turn: a streak of passes
    # is at most the tiles drawn since the deal plus one round with the boneyard empty
    drawn = max(0, N_TILES - n * variant.hand_size - len(boneyard))
    if passes > drawn + n:
        raise PositionError(f"passes={passes}: at most {drawn + n} passes in a row can have happened here "
                            f"({drawn} tiles drawn since the deal, and each pass while the boneyard lasts "
                            "follows a draw)")
    if "line" in fields and "ends" in fields:
        raise PositionError("give 'line' or 'ends', not both")
    if "ends" in fields and "arms" in fields:
        raise PositionError("give 'arms' with 'line'; with 'ends' the side lines are its last two numbers")
    held = 0
    for t in seen:
        held |= 1 << t
    ends = [-1, -1, -1, -1]
    line, arms, spinner = (), ((), ()), -1
    table = FULL_SET & ~held
    if "line" in fields and fields["line"] not in ("", "-"):
        line, at = _oriented_chain(fields["line"], claim, "line")
        line = tuple(line)
        ends[0], ends[1] = line[0][0], line[-1][1]
        if at >= 0:
            spinner = line[at][0]
        arm_lists = [[], []]
        if "arms" in fields:
            if spinner < 0:
                raise PositionError("arms given but no spinner is marked '*' in the line")
            parts = fields["arms"].split("/")
            if len(parts) != 2:
                raise PositionError(f"arms={excerpt(fields['arms'])}: expected two side lines separated by '/'")
            for k, part in enumerate(parts):
                if part.strip() in ("", "-"):
                    continue
                chain, marked = _oriented_chain(part, claim, f"side line {k + 1}", start=spinner)
                if marked >= 0:
                    raise PositionError(f"side line {k + 1}: only the main line holds the spinner")
                arm_lists[k] = chain
                ends[2 + k] = chain[-1][1]
        arms = tuple(tuple(a) for a in arm_lists)
        table = 0
        for t in seen:
            if seen[t] in ("line", "side line 1", "side line 2"):
                table |= 1 << t
        doubles = [t for t in tiles_of(table) if IS_DOUBLE[t]]
        if doubles and spinner < 0:
            raise PositionError(f"the table holds {tile_name(doubles[0])} but no spinner is marked '*' "
                                "(the first double placed, or a double that opened, is the spinner)")
        unplaced = FULL_SET & ~held & ~table
        if unplaced:
            raise PositionError(f"tiles in no hand, boneyard or line: {format_tiles(tiles_of(unplaced))}")
    elif "ends" in fields:
        raw = fields["ends"].replace(" ", "").split("|")
        ok = len(raw) == 4 and all(_digit(e) and 0 <= int(e) <= 6 for e in raw[:2]) \
            and all(e == "-" or (_digit(e) and 0 <= int(e) <= 6) for e in raw[2:])
        if not ok:
            raise PositionError(f"ends={excerpt(fields['ends'])}: expected 'LEFT|RIGHT|SIDE1|SIDE2' with numbers 0-6, "
                                "'-' for a side line not started (like '2|0|6|-')")
        ends = [int(e) if e != "-" else -1 for e in raw]
        sp = fields.get("spinner", "-").strip()
        if sp != "-":
            if not (_digit(sp) and 0 <= int(sp) <= 6):
                raise PositionError(f"spinner={excerpt(sp)}: expected a number 0-6 or '-'")
            spinner = int(sp)
            if not table >> TILE_ID[(spinner, spinner)] & 1:
                raise PositionError(f"spinner={spinner}, but {spinner}-{spinner} is not on the table")
        elif ends[2] >= 0 or ends[3] >= 0:
            raise PositionError("side lines are open but spinner is '-'")
        line, arms = None, None
        for e in ends:
            if e >= 0 and not table & SUIT[e]:
                raise PositionError(f"ends show {e}, but no tile on the table carries {e}")
    else:
        if "arms" in fields:
            raise PositionError("arms given but the table is empty")
        if table:
            raise PositionError(f"the table is empty but these tiles are nowhere: {format_tiles(tiles_of(table))}")
    if "spinner" in fields and "ends" not in fields:
        raise PositionError("give 'spinner' only with 'ends' (in a line, mark the spinner with '*')")
    winnings = _columns(fields["winnings"], "winnings", n) if "winnings" in fields else [0] * n
    penalties = _columns(fields["penalties"], "penalties", n) if "penalties" in fields else [0] * n
    draws = _int(fields.get("draws", "0"), "draws")
    if not 0 <= draws <= variant.spinner.luck_draws:
        raise PositionError(f"draws={draws}: must be 0..{variant.spinner.luck_draws} (draws allowed per turn)")
    lucky = -1
    if "lucky" in fields and fields["lucky"] not in ("", "-"):
        lucky = parse_tile(fields["lucky"])
        if not hands[turn] >> lucky & 1:
            raise PositionError(f"lucky={fields['lucky']}: the lucky tile must be in the hand of seat {turn}")
        if draws < 1:
            raise PositionError("a lucky tile was drawn this turn: draws must be at least 1")
    state = TripleState(variant, hands, boneyard, ends=ends, spinner=spinner, arms=arms, line=line,
                        current_player=turn, passes=passes, table=table, winnings=winnings, penalties=penalties,
                        turn_draws=draws, lucky=lucky, from_deal=ends[0] < 0)
    if lucky >= 0 and not state.placements():
        raise PositionError(f"lucky={tile_name(lucky)} has no scoring placement here")
    if (passes >= n and not boneyard) or (not boneyard and not any(hands)):
        state._finish(None, blocked=bool(any(hands)))
    return state


def format_position(state) -> str:
    """The position string of ``state`` (round-trips through :func:`parse_position`)."""
    if isinstance(state, TroshinMatch):
        hand = format_position(state.hand)
        name, _, rest = hand.partition("; ")
        scores, hands = state.scores, state.hand_index
        if state.is_chance:   # the finished hand is written with the scores before it (parsing counts it)
            scores = [s - p for s, p in zip(scores, state.hand_points[-1])]
            hands -= 1
        extra = f"match={' / '.join(map(str, scores))}; hand={hands}"
        if state.target != state.variant.match_target:
            extra += f"; target={state.target}"
        return f"{name}; {extra}; {rest}"
    v = state.variant
    parts = [v.name, f"turn={state.current_player}", f"passes={state.passes}"]
    return "; ".join(parts + _LAYOUTS[v.layout].fields(state))


def _line_fields(state):
    parts = []
    if state.left < 0:
        parts.append("line=-")
    elif state.line is not None:
        parts.append("line=" + " ".join(f"{a}-{b}" for a, b in state.line))
    else:
        parts.append(f"ends={state.left}|{state.right}")
    parts.append("hands=" + " / ".join(format_tiles(tiles_of(h)) or "-" for h in state.hands))
    parts.append("boneyard=" + (format_tiles(state.boneyard_tiles()) or "-"))
    return parts


def _triple_fields(state):
    parts = []
    if state.ends[0] < 0:
        parts.append("line=-")
    elif state.line is not None:
        spin = state.spinner
        marked = False
        toks = []
        for a, b in state.line:
            tok = f"{a}-{b}"
            if not marked and a == b == spin:
                tok += "*"
                marked = True
            toks.append(tok)
        parts.append("line=" + " ".join(toks))
        if spin >= 0:
            parts.append("arms=" + " / ".join(" ".join(f"{a}-{b}" for a, b in arm) or "-" for arm in state.arms))
    else:
        parts.append("ends=" + "|".join(str(e) if e >= 0 else "-" for e in state.ends))
        parts.append(f"spinner={state.spinner if state.spinner >= 0 else '-'}")
    parts.append("hands=" + " / ".join(format_tiles(tiles_of(h)) or "-" for h in state.hands))
    parts.append("boneyard=" + (format_tiles(state.boneyard_tiles()) or "-"))
    parts.append("winnings=" + " / ".join(map(str, state.winnings)))
    parts.append("penalties=" + " / ".join(map(str, state.penalties)))
    parts.append(f"draws={state.turn_draws}")
    if state.lucky >= 0:
        parts.append(f"lucky={tile_name(state.lucky)}")
    return parts


def render(state, viewer: int | None = None) -> str:
    """A text picture of the table; hands other than ``viewer``'s are hidden (None: all shown)."""
    if isinstance(state, TroshinMatch):
        v = state.variant
        sides = ("pair 0+2", "pair 1+3") if v.pairs else tuple(f"seat {p}" for p in range(v.players))
        head = (f"match to {state.target}, hand {state.hand_index + (0 if state.is_terminal or state.is_chance else 1)}: "
                + ", ".join(f"{side} {score}" for side, score in zip(sides, state.scores)))
        if state.is_terminal:
            head += f"; match won by {sides[state.match_winner]}"
        elif state.is_chance:
            head += "; the next hand is to deal"
        return head + "\n" + render(state.hand, viewer)
    return _LAYOUTS[state.variant.layout].render(state, viewer)


def _render_line(state, viewer) -> str:
    v = state.variant
    lines = []
    if state.left < 0:
        lines.append("table: (empty)")
    elif state.line is not None:
        lines.append("line:  " + " ".join(f"[{a}|{b}]" for a, b in state.line))
    lines.append(f"ends:  {state.left}|{state.right}" if state.left >= 0 else "ends:  -")
    for p in range(v.players):
        hand = state.hands[p]
        if viewer is None or viewer == p:
            shown = format_tiles(tiles_of(hand)) or "(empty)"
        else:
            shown = f"{bin(hand).count('1')} tiles"
        mark = ">" if p == state.current_player and not state.is_terminal else " "
        lines.append(f"{mark} seat {p}: {shown}")
    lines.append(f"boneyard: {state.boneyard_size} tiles" + ("" if v.draw else " (out of play)"))
    if state.is_terminal:
        how = "blocked" if state.blocked else "went out"
        if state.winner == -1:
            who = "draw"
        elif v.pairs:
            who = f"pair {state.winner}+{state.winner + 2} wins"
        else:
            who = f"seat {state.winner} wins"
        lines.append(f"game over ({how}): {who}; pips left {state.pips_left()}")
        if v.scoring == "troshin":
            lines.append(f"points: {state.points()}")
    return "\n".join(lines)


def _render_triple(state, viewer) -> str:
    v = state.variant
    lines = []
    if state.ends[0] < 0:
        lines.append("table: (empty)")
    elif state.line is not None:
        lines.append("line:  " + " ".join(f"[{a}|{b}]" + ("*" if a == b == state.spinner else "")
                                          for a, b in state.line))
        if state.spinner >= 0:
            for k, arm in enumerate(state.arms):
                lines.append(f"side {k + 1}: " + (" ".join(f"[{a}|{b}]" for a, b in arm) or "(none)"))
    if state.ends[0] >= 0:
        shown = " ".join(f"{name}={e}" for name, e in zip(("left", "right", "side1", "side2"), state.ends) if e >= 0)
        lines.append(f"ends:  {shown}; count {state.count()}"
                     + (f"; spinner {state.spinner}-{state.spinner}" if state.spinner >= 0 else ""))
    for p in range(v.players):
        hand = state.hands[p]
        shown = format_tiles(tiles_of(hand)) or "(empty)" if viewer is None or viewer == p \
            else f"{bin(hand).count('1')} tiles"
        mark = ">" if p == state.current_player and not state.is_terminal else " "
        lines.append(f"{mark} seat {p}: {shown}   winnings {state.winnings[p]}, penalties {state.penalties[p]}")
    lines.append(f"boneyard: {state.boneyard_size} tiles; draws this turn {state.turn_draws}")
    if state.is_terminal:
        r = state.result()
        who = "draw" if not r["winners"] else "winner " + ", ".join(f"seat {p}" for p in r["winners"])
        lines.append(f"game over: {who}; ranks {r['ranks']}")
    return "\n".join(lines)



class _Layout(NamedTuple):
    """A layout's notation: its extra fields and how to parse, write and draw a position."""

    keys: Tuple[str, ...]
    parse: Callable
    fields: Callable
    render: Callable


# variant.layout -> its notation (the rules are in ``line`` and ``triple``)
_LAYOUTS = {
    "line": _Layout((), _parse_line, _line_fields, _render_line),
    "spinner": _Layout(_TRIPLE_KEYS, _parse_triple, _triple_fields, _render_triple),
}

__all__ = ["parse_position", "format_position", "render", "TILES"]
