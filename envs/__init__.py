"""Rules engines (pure Python) and their Gymnasium adapters.

Importing ``envs`` registers the environment ids with Gymnasium.  The rules modules
(``pipslab.envs.dominoes.engine``, ``pipslab.envs.backgammon.board`` …) import no gymnasium, torch,
pandas or matplotlib; only the ``env`` modules do.
"""
from gymnasium.envs.registration import register, registry

_ENVS = {
    "pipslab/HappyDominoes-v0": "pipslab.envs.dominoes.env:HappyDominoesEnv",
    "pipslab/TroshinDominoes-v0": "pipslab.envs.dominoes.troshin_env:TroshinDominoesEnv",
    "pipslab/TripleDominoes-v0": "pipslab.envs.dominoes.triple_env:TripleDominoesEnv",
    "pipslab/Backgammon-v0": "pipslab.envs.backgammon.env:BackgammonEnv",
}

for _id, _entry in _ENVS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry)
