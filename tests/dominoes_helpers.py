"""Small helpers shared by the domino tests."""
from pipslab.envs.dominoes.engine import encode_place
from pipslab.envs.dominoes.notation import parse_position
from pipslab.envs.dominoes.tiles import FULL_SET, format_tiles, mask_of, parse_tile, tiles_of


def t(name: str) -> int:
    return parse_tile(name)


def hand(state, seat) -> str:
    return format_tiles(tiles_of(state.hands[seat]))


def place(state, tile: str, end: str) -> int:
    return encode_place(state.variant, t(tile), {"left": 0, "right": 1}[end])


def rest_of(*groups: str) -> str:
    """The tiles in none of the given space-separated groups, as a tile list."""
    used = mask_of(t(x) for g in groups for x in g.split())
    return format_tiles(tiles_of(FULL_SET & ~used))


def position(text: str):
    return parse_position(text)
