"""Cross-check backgammon move generation against GNU Backgammon (``gnubg_nn``).

Generates positions by random play (openings, contact, bar entries against closed
points, closed boards, bear-offs with hits) plus a few built on purpose (closed boards
with checkers on the bar, bear-offs against checkers on the bar), and for every roll
compares our set of resulting positions with ``gnubg_nn.moves``.  Prints the counts per
kind and the mismatches; ``--fixture PATH`` writes the compared cases (position id,
roll, sorted resulting Position IDs from gnubg) as gzipped JSON for the test suite.

    python -m experiments.crosscheck_backgammon --positions 3000 --fixture tests/data/backgammon_moves.json.gz
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter

import numpy as np

from pipslab.envs.backgammon import Position, legal_plays, new_game
from pipslab.envs.backgammon.game import CHANCE_OUTCOMES
from pipslab.envs.backgammon.moves import dice_to_play
from pipslab.envs.errors import PipslabError

ROLLS = [roll for roll, _ in CHANCE_OUTCOMES]


def _gnubg():
    try:
        import gnubg_nn
    except ImportError:  # pragma: no cover - gnubg-nn is part of the [bench] extra
        raise PipslabError("gnubg_nn is not installed: pip install 'pipslab[bench]'") from None
    return gnubg_nn


def kind_of(pos: Position) -> str:
    """A coarse label of a position for the stratified sample."""
    closed_home = sum(1 for i in range(19, 25) if pos[i] <= -2)
    if pos.bar and closed_home == 6:
        return "closed_board"
    if pos.bar and closed_home >= 3:
        return "bar_vs_closed_points"
    if pos.bar:
        return "bar_entry"
    if pos.all_home():
        return "bear_off_contact" if not pos.is_race() else "bear_off_race"
    if pos.is_race():
        return "race"
    return "contact"


def random_positions(n_games: int, rng: np.random.Generator):
    """Turn-start positions of random games, with the move number."""
    for _ in range(n_games):
        state = new_game()
        turn = 0
        while not state.is_terminal:
            if state.is_chance:
                state.apply_chance(rng)
                turn += 1
                yield state.position, turn
            else:
                legal = state.legal_actions()
                state.apply(legal[int(rng.integers(len(legal)))])


def built_positions(rng: np.random.Generator, n: int):
    """Positions built on purpose: closed or nearly closed boards against the bar,
    bear-offs with opposing checkers on the bar or in the home board."""
    out = []
    for _ in range(n):
        b = [0] * 26
        kind = rng.integers(3)
        # opponent: close k home points (my 19-24), the rest spread
        k = int(rng.integers(3, 7)) if kind == 0 else int(rng.integers(0, 3))
        points = list(rng.choice(np.arange(19, 25), size=k, replace=False))
        left = 15
        for p in points:
            b[p] = -2
            left -= 2
        while left > 0:
            p = int(rng.integers(1, 25))
            if b[p] <= 0 and rng.random() < 0.5:
                b[p] -= 1
                left -= 1
            elif rng.random() < 0.1:
                b[0] -= 1
                left -= 1
        # me: on the bar (kind 0), or all home for a bear-off (kinds 1-2), some off
        mine = 15 - int(rng.integers(0, 10 if kind else 3))
        if kind == 0:
            nbar = int(rng.integers(1, 3))
            b[25] = nbar
            mine -= nbar
            lo, hi = 1, 24
        else:
            lo, hi = 1, 6
            if kind == 2:
                b[25] = 1          # hit during the bear-off
                mine -= 1
        tries = 0
        while mine > 0 and tries < 1000:
            tries += 1
            p = int(rng.integers(lo, hi + 1))
            if b[p] >= 0:
                b[p] += 1
                mine -= 1
        if mine == 0:
            out.append(Position(b))
    return out


def gnubg_results(g, pos: Position, roll) -> list:
    keys = g.moves(pos.to_gnubg(), int(roll[0]), int(roll[1]))
    return sorted(g.position_id([list(side) for side in g.board_from_position_key(k)]) for k in keys)


def our_results(pos: Position, roll) -> list:
    return sorted(p.position.id for p in legal_plays(pos, dice_to_play(roll)))


def case_tags(pos: Position, roll, results_n: int) -> list:
    tags = []
    plays = legal_plays(pos, dice_to_play(roll))
    full = 4 if roll[0] == roll[1] else 2
    if not plays:
        tags.append("no_move")
    elif len(plays[0].steps) < full:
        tags.append("partial_roll")
        if roll[0] != roll[1]:
            if all(p.steps[0][1] == max(roll) for p in plays):
                # could the smaller die alone have been played?
                if legal_plays(pos, (min(roll),)):
                    tags.append("larger_die_forced")
    return tags


def run_crosscheck(positions: int, seed: int, fixture: str | None, fixture_cases: int,
                   verbose: bool = True) -> dict:
    g = _gnubg()
    rng = np.random.default_rng(seed)
    pool = {}
    for pos, turn in random_positions(max(50, positions // 20), rng):
        k = "opening" if turn <= 2 else kind_of(pos)
        pool.setdefault(k, {})[pos] = None
    for pos in built_positions(rng, max(100, positions // 5)):
        pool.setdefault("built_" + kind_of(pos), {})[pos] = None
    # stratified: as evenly as the kinds allow
    kinds = sorted(pool)
    chosen = []
    per_kind = max(1, positions // len(kinds))
    for k in kinds:
        items = list(pool[k])
        rng.shuffle(items)
        chosen += [(k, p) for p in items[:per_kind]]
    mismatches = []
    cases = []
    counts = Counter()
    tag_counts = Counter()
    for k, pos in chosen:
        for roll in ROLLS:
            ours = our_results(pos, roll)
            theirs = gnubg_results(g, pos, roll)
            counts[k] += 1
            tags = case_tags(pos, roll, len(ours))
            tag_counts.update(tags)
            if ours != theirs:
                mismatches.append({"position_id": pos.id, "dice": list(roll), "ours": ours, "gnubg": theirs})
            cases.append({"position_id": pos.id, "dice": list(roll), "kind": k, "tags": tags,
                          "results": theirs})
    report = {"positions": len(chosen), "cases": sum(counts.values()), "mismatches": len(mismatches),
              "by_kind": dict(counts), "tags": dict(tag_counts), "examples": mismatches[:5]}
    if fixture:
        # the hard cases first (the larger die forced, the roll not playable in full, no
        # move at all), a quota of each, then the rest with every kind mixed
        rng.shuffle(cases)
        quotas = {"larger_die_forced": fixture_cases // 8, "partial_roll": fixture_cases // 6,
                  "no_move": fixture_cases // 12}
        picked, seen = [], set()
        for tag, quota in quotas.items():
            for i, c in enumerate(cases):
                if quota and tag in c["tags"] and i not in seen:
                    picked.append(c)
                    seen.add(i)
                    quota -= 1
        picked += [c for i, c in enumerate(cases) if i not in seen][: max(0, fixture_cases - len(picked))]
        with gzip.open(fixture, "wt", encoding="utf-8") as fh:
            json.dump({"source": "gnubg_nn.moves", "seed": seed, "cases": picked}, fh, separators=(",", ":"))
        report["fixture_cases"] = len(picked)
        report["fixture_tags"] = dict(Counter(t for c in picked for t in c["tags"]))
    if verbose:
        print(f"positions {report['positions']}, cases (position x roll) {report['cases']}, "
              f"mismatches {report['mismatches']}")
        for k in sorted(counts):
            print(f"  {k:28s} {counts[k]:7d} cases")
        for t, n in sorted(tag_counts.items()):
            print(f"  tag {t:24s} {n:7d}")
        for m in mismatches[:5]:
            print("  MISMATCH", m["position_id"], m["dice"], "ours", len(m["ours"]), "gnubg", len(m["gnubg"]))
        if fixture:
            print(f"wrote {report['fixture_cases']} cases to {fixture} ({report['fixture_tags']})")
    return report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=2000, help="positions to check (x 21 rolls)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fixture", default=None, help="write a gzipped JSON fixture here")
    ap.add_argument("--fixture-cases", type=int, default=2500)
    ap.add_argument("--json", action="store_true", help="print the report as JSON on the last line")
    args = ap.parse_args(argv)
    report = run_crosscheck(args.positions, args.seed, args.fixture, args.fixture_cases)
    if args.json:
        print(json.dumps(report))
    return 1 if report["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
