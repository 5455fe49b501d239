"""Neural domino players: a policy-and-value network per variant, the ``net`` agent, the
``eval=net`` evaluator and the guidance ``ismcts:net=NAME`` searches with.

The network (:class:`PolicyNet`) acts from **one seat's observation** — the game's own
encoder of ``state.observe(seat)`` (``Game.observation_encoder``: Happy's 111 floats,
Troshin's 191, Triple's 220; documented in the Gymnasium envs' docstrings), so it sees
exactly what the seat may see and nothing of the other hands or the boneyard.  It
outputs one logit per action id of the variant and a value in ``[-1, 1]``: the seat's
expected return on the game's ``returns()`` scale (zero-sum; partners share theirs).
Illegal actions are masked out before the softmax (their logits set to ``-inf``), so
they get probability exactly zero and are never chosen or sampled.

Play runs on a numpy copy of the weights (:class:`NetPlayer`): an agent or a search
values one to four observations at a time (a lock-step batch of searches: a few hundred),
where torch's per-call overhead would cost more than the arithmetic (a forward pass of
the 256x256 net on four rows takes ~15 µs in numpy; run it with one BLAS thread — on a
busy machine waking a threaded BLAS for these small products costs milliseconds).
Files are written by ``torch.save`` of a plain dict and read with
``torch.load(weights_only=True)`` (:mod:`pipslab.agents.netfiles`); shipped nets are
``agents/nets/<variant>.pt`` (``happy-block``, ``happy-draw``, ``troshin-3``,
``troshin-4-pairs``, ``triple-3``) with a model card ``<variant>.md`` beside each.

Made by name through :mod:`pipslab.agents.neural` (torch is imported only when one is
built):

* ``net`` — plays the shipped net of the variant being played (a clear error when none
  is shipped); ``net:net=NAME`` another shipped net, ``net:net=PATH`` a file or training
  checkpoint of ``pipslab train``; greedy (the most probable legal action, ties to the
  lowest id) unless ``sample=true`` (drawn from the masked policy with the game's rng).
* ``eval=net`` / ``eval=net:NAME|PATH`` (family ``dominoes``) — the value head on the
  evaluator seam: ``pimc:depth=4,eval=net`` scores its depth-limited leaves with it, and
  ``ismcts:eval=net`` its new nodes.
* ``ismcts:eval=net`` (``ismcts:net=NAME`` is an alias of ``eval=net:NAME``) — ISMCTS
  guided by the net: :meth:`NetEvaluator.prior`, the policy of the seat to move, is the
  prior of a PUCT selection, and :meth:`NetEvaluator.evaluate`, the value heads of every
  seat, values the new node — both from one forward pass over the new nodes of many
  searches at once (:meth:`NetEvaluator.evaluate_prior`; see
  :mod:`pipslab.agents.search_dominoes`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import nn

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from .base import Agent, Observation
from .evaluators import DominoEvaluator, states_holding
from .netfiles import load_cached, net_path, read_net_file, shipped_nets

NET_FORMAT = "pipslab-policy-dominoes"
DEFAULT_HIDDEN = (256, 256)
DOMINO_PREFIXES = ("happy-", "troshin-", "triple-")


def domino_nets() -> List[str]:
    """The shipped domino nets, named after their variant."""
    return [n for n in shipped_nets() if n.startswith(DOMINO_PREFIXES)]


def net_spec(game: str, options: dict) -> dict:
    """The ``config`` of a net for ``game`` with ``options``: the game, its options, the
    variant's name, the observation size and the number of actions."""
    g = get_game(game)
    opts = g.resolve({k: v for k, v in options.items() if k != "position"})
    opts.pop("position", None)
    if opts.get("match"):
        raise PipslabError("a net plays hands; train it without --match (it plays matches hand by hand)")
    return {"game": game, "options": opts, "variant": g.variant_label(opts),
            "inputs": g.observation_encoder(opts).size, "actions": g.actions(opts)}


ARCHS = ("mlp", "placements")
PLACEMENT_HIDDEN = 64


def encoder_layout(config: dict):
    """The tile layout of the encoder a net's ``config`` reads (a clear error where the
    game's encoder declares none)."""
    layout = get_game(config["game"]).observation_encoder(config["options"]).layout
    if layout is None:
        raise PipslabError(f"the placements net needs an encoder with a tile layout; {config['game']}'s has none")
    return layout


class PolicyNet(nn.Module):
    """``observation -> hidden (ReLU) x k -> (logits over the action ids, value)``.

    ``config``: :func:`net_spec`'s table plus ``hidden`` (layer sizes) and ``arch``:

    * ``mlp`` (the default, and every net before it) — each action's logit is its own
      linear readout of the last hidden layer;
    * ``placements`` — each placement's logit is one shared small net (two layers of
      :data:`PLACEMENT_HIDDEN`) of that placement's features (the encoder's
      :meth:`~pipslab.envs.dominoes.encoding.TileLayout.placement_features`) and the
      last hidden layer; DRAW and PASS stay readouts.  Why: the facts that make a
      placement good (the number it leaves open, who can follow it) are the same for
      every tile, so one function of them learns from every label at once (what it
      bought: docs/training.md).

    ``mirror`` (config ``"mirror": true``; Happy and Troshin, whose line has two ends the
    rules treat alike): the net reads every row in one canonical form — the line turned
    round where its first end shows the higher number — and its placement logits are
    turned back, so a position and its mirror get mirrored policies and one value by
    construction, and every label teaches both (what it bought: docs/training.md)."""

    def __init__(self, config: dict):
        super().__init__()
        hidden = [int(h) for h in config.get("hidden", DEFAULT_HIDDEN)]
        if not hidden or min(hidden) < 1:
            raise PipslabError(f"hidden layer sizes must be positive, got {hidden}")
        arch = config.get("arch", "mlp")
        if arch not in ARCHS:
            raise PipslabError(f"unknown net arch {arch!r} (known: {', '.join(ARCHS)})")
        self.config = dict(config, hidden=hidden)
        self.config.pop("arch", None)
        if arch != "mlp":                    # an mlp's config stays as it always was
            self.config["arch"] = arch
        self.config.pop("mirror", None)
        self.mirror = None
        if config.get("mirror"):
            self.config["mirror"] = True
            self.mirror = Mirror(self.config)
        layers, width = [], int(config["inputs"])
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.body = nn.Sequential(*layers)
        self.layout = None
        if arch == "mlp":                    # made in this order, so a seed makes the same weights as ever
            self.policy = nn.Linear(width, int(config["actions"]))
            self.value = nn.Linear(width, 1)
            return
        self.value = nn.Linear(width, 1)
        from pipslab.envs.dominoes.encoding import PLACEMENT_FEATURES
        self.layout = encoder_layout(self.config)
        self.place_in = nn.Linear(PLACEMENT_FEATURES, PLACEMENT_HIDDEN)
        self.place_context = nn.Linear(width, PLACEMENT_HIDDEN, bias=False)
        self.place_hidden = nn.Linear(PLACEMENT_HIDDEN, PLACEMENT_HIDDEN)
        self.place_out = nn.Linear(PLACEMENT_HIDDEN, 1)
        self.policy = nn.Linear(width, int(config["actions"]) - 28 * self.layout.n_ends)      # DRAW, PASS

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if self.mirror is None:
            return self.forward_canonical(x)
        flip = self.mirror.layout.mirrored(x.detach())[:, None]
        logits, value = self.forward_canonical(torch.where(flip, x[:, self.mirror.inputs], x))
        return torch.where(flip, logits[:, self.mirror.actions], logits), value

    def forward_canonical(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)
        value = torch.tanh(self.value(h)).squeeze(-1)
        if self.layout is None:
            return self.policy(h), value
        # the features are a fixed function of the inputs: computed in numpy (no gradient),
        # for the tiles in hand only (any other placement is illegal: its logit stays 0)
        xn = x.detach().cpu().numpy()
        rows, tiles = self.layout.held_tiles(xn)
        f = torch.from_numpy(self.layout.placement_features(xn, rows, tiles)).to(x.device, x.dtype)
        rows_t = torch.from_numpy(rows).to(x.device)
        g = torch.relu(self.place_in(f) + self.place_context(h)[rows_t][:, None, :])
        g = torch.relu(self.place_hidden(g))
        place = torch.zeros(x.shape[0], 28, self.layout.n_ends, dtype=x.dtype, device=x.device)
        place = place.index_put((rows_t, torch.from_numpy(tiles).to(x.device)), self.place_out(g).squeeze(-1))
        return torch.cat([place.reshape(x.shape[0], -1), self.policy(h)], 1), value


class Mirror:
    """The canonical form of a ``mirror`` net (:class:`PolicyNet`): the encoder's layout
    and the two permutations, of the inputs and of the action ids, that turn a line round
    (:meth:`~pipslab.envs.dominoes.encoding.TileLayout.mirror_inputs`)."""

    def __init__(self, config: dict):
        self.layout = encoder_layout(config)
        try:
            self.inputs = self.layout.mirror_inputs(int(config["inputs"]))
        except ValueError as exc:
            raise PipslabError(f"a mirror net for {config['variant']}: {exc}") from None
        self.actions = self.layout.mirror_actions(int(config["actions"]))


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with the illegal actions (``mask == 0``) at ``-inf``: probability 0."""
    return logits.masked_fill(mask == 0, float("-inf"))


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row-wise softmax over the legal actions; illegal ones get exactly 0."""
    z = np.where(mask != 0, logits, -np.inf)
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def sample_action(probs: np.ndarray, legal: Sequence[int], u: float) -> int:
    """The legal action whose share of the cumulative probability holds ``u`` in [0, 1):
    only legal actions can come out, whatever the rounding."""
    legal = np.asarray(legal)
    c = np.cumsum(probs[legal])
    return int(legal[min(int(np.searchsorted(c, u * c[-1], side="right")), len(legal) - 1)])


def sample_actions(probs: np.ndarray, masks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """:func:`sample_action` for every row of ``probs`` at once (``u``: one uniform in
    [0, 1) per row); a row whose draw would land past its last legal action (rounding)
    takes that last legal action."""
    c = np.cumsum(probs, axis=1)
    idx = (c <= (u * c[:, -1])[:, None]).sum(axis=1)
    last = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] != 0, axis=1)
    bad = (idx >= masks.shape[1])
    idx[bad] = last[bad]
    bad = masks[np.arange(len(idx)), idx] == 0
    idx[bad] = last[bad]
    return idx


def net_dict(net: PolicyNet, meta: Optional[dict] = None, **extra) -> dict:
    """What :func:`load_player` reads (``extra`` rides along in a training checkpoint)."""
    return {"format": NET_FORMAT, "config": dict(net.config), "model": net.state_dict(),
            "meta": dict(meta or {}), **extra}


def read_net(path: Path) -> dict:
    return read_net_file(path, NET_FORMAT, "domino policy network", ", ".join(domino_nets()))


def net_from(data: dict, path) -> PolicyNet:
    """The :class:`PolicyNet` of a file's dict; one-line errors when it does not fit."""
    cfg = data["config"]
    try:
        for key in ("game", "options", "variant", "inputs", "actions"):
            if key not in cfg:
                raise PipslabError(f"the network's config has no {key!r}")
        net = PolicyNet(cfg)
        net.load_state_dict(data["model"], strict=True)
    except PipslabError as exc:
        raise PipslabError(f"{path}: {exc}") from None
    except (RuntimeError, TypeError, ValueError, KeyError) as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise PipslabError(f"{path}: the weights do not fit the network they describe ({first})") from None
    net.eval()
    return net


def grow(start: PolicyNet, net: PolicyNet) -> PolicyNet:
    """``net`` (freshly made, so its new units come from its own seed) set to compute
    exactly what ``start`` computes (Net2Net's widening): ``start``'s weights in its
    first units, the weights from each layer's new units into the next layer's old ones
    and into the heads 0.  So a wider net starts where a trained one stopped and learns
    from there.  One line unless the two differ in hidden widths (``net``'s as many layers
    and none narrower) and ``mirror`` alone: a mirror net grown from a plain one computes
    the plain one's function on each row's canonical form, which it then learns on."""
    a, b = start.config, net.config
    same = ({k: v for k, v in a.items() if k not in ("hidden", "mirror")}
            == {k: v for k, v in b.items() if k not in ("hidden", "mirror")})
    if not same or len(a["hidden"]) != len(b["hidden"]) or any(w < o for w, o in zip(b["hidden"], a["hidden"])):
        raise PipslabError(f"cannot grow a net for {a['variant']} with hidden {a['hidden']} ({a.get('arch', 'mlp')}) "
                           f"into one for {b['variant']} with {b['hidden']} ({b.get('arch', 'mlp')}): only wider "
                           "layers, as many, of the same variant and arch")
    old, new = start.state_dict(), net.state_dict()
    with torch.no_grad():
        for name, w in old.items():            # a head's rows, like a same-sized layer's, are all old
            v = new[name]
            v[tuple(slice(0, s) for s in w.shape)] = w
            if w.dim() == 2:
                v[:w.shape[0], w.shape[1]:] = 0.0     # old units and the heads ignore the new units below
    net.load_state_dict(new)
    return net


class NetPlayer:
    """A read-only numpy copy of a :class:`PolicyNet` for play and search.

    ``encode(view)`` is the variant's observation; :meth:`forward` takes rows of them.
    ``dtype``: float32 for play; the trainer's self-play takes float64, where the last
    bits a row's result takes from the other rows of its pass are too small to move a
    sampled move (in float32 they moved one, and a long run's weights then hung on the
    worker count)."""

    def __init__(self, net: PolicyNet, source: str = "", dtype=np.float32):
        self.config = dict(net.config)
        self.source = source
        self.variant = self.config["variant"]
        self.dtype = dtype
        def linear(m):
            return (m.weight.detach().numpy().T.astype(dtype).copy(),
                    None if m.bias is None else m.bias.detach().numpy().astype(dtype).copy())

        self.body = [linear(m) for m in net.body if isinstance(m, nn.Linear)]
        self.w_pi, self.b_pi = linear(net.policy)
        self.w_v, self.b_v = linear(net.value)
        self.layout = net.layout
        if self.layout is not None:
            self.place = [linear(net.place_in), linear(net.place_context)[0], linear(net.place_hidden),
                          linear(net.place_out)]
        self.mirror = net.mirror
        g = get_game(self.config["game"])
        self.encode = g.observation_encoder(self.config["options"]).encode

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(logits (k, actions), values (k,))`` of ``k`` observation rows (the
        :class:`PolicyNet`'s own arithmetic)."""
        x = np.asarray(x, dtype=self.dtype)
        if self.mirror is None:
            return self.forward_canonical(x)
        flip = self.mirror.layout.mirrored(x)
        if not flip.any():
            return self.forward_canonical(x)
        x = x.copy()
        x[flip] = x[flip][:, self.mirror.inputs]
        logits, values = self.forward_canonical(x)
        logits[flip] = logits[flip][:, self.mirror.actions]
        return logits, values

    def forward_canonical(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        h = x
        for w, b in self.body:
            h = h @ w
            h += b
            np.maximum(h, 0.0, out=h)
        values = np.tanh(h @ self.w_v + self.b_v)[:, 0]
        if self.layout is None:
            return h @ self.w_pi + self.b_pi, values
        (wi, bi), wc, (wh, bh), (wo, bo) = self.place
        rows, tiles = self.layout.held_tiles(x)
        n_ends = self.layout.n_ends
        f = self.layout.placement_features(x, rows, tiles).astype(self.dtype, copy=False)
        g = f.reshape(-1, f.shape[2]) @ wi                  # 2-D products: one BLAS call each
        g += bi
        g += np.repeat((h @ wc)[rows], n_ends, axis=0)
        np.maximum(g, 0.0, out=g)
        g = g @ wh
        g += bh
        np.maximum(g, 0.0, out=g)
        place = np.zeros((len(x), 28, n_ends), dtype=self.dtype)
        place[rows, tiles] = (g @ wo + bo).reshape(len(rows), n_ends)
        return np.concatenate([place.reshape(len(x), -1), h @ self.w_pi + self.b_pi], 1), values

    def check_variant(self, variant) -> None:
        name = getattr(variant, "name", variant)
        if name != self.variant:
            raise PipslabError(f"net {self.source!r} was trained for {self.variant}, not {name}")




def shipped_name(variant_name: str) -> str:
    """The shipped net of a variant; a clear error when there is none."""
    if (net_path(variant_name)).is_file():
        return variant_name
    known = ", ".join(domino_nets()) or "none"
    raise PipslabError(f"no shipped net for {variant_name} (shipped: {known}); train one with "
                       f"`pipslab train` and play it with net:net=PATH")


def load_player(name_or_path: str) -> NetPlayer:
    """The net of a shipped name or a file, loaded once per process (keyed by the file
    and its modification time).  Read-only: play never changes it."""
    return load_cached("dominoes", name_or_path,
                       lambda path: NetPlayer(net_from(read_net(path), path), str(name_or_path)))


class _NetChoice:
    """The net named by an agent's or evaluator's ``net`` parameter, or — when none is
    named — the shipped net of the variant being played, found at first use."""

    def __init__(self, net: Optional[str]):
        self.name = None if net in (None, "") else str(net)
        self.player: Optional[NetPlayer] = load_player(self.name) if self.name else None

    def check_table(self, game: str, options: dict) -> None:
        """The net must exist for the variant these options make (one line if not)."""
        self.get(get_game(game).new_state(np.random.default_rng(0), options).variant)

    def get(self, variant) -> NetPlayer:
        if self.player is None:
            self.player = load_player(shipped_name(variant.name))
        self.player.check_variant(variant)
        return self.player


class NetAgent(Agent):
    """Plays the net's policy from its own seat's view: greedy, or sampled with
    ``sample=true``.  Holds nothing between games but the shared read-only net."""

    name = "net"

    def __init__(self, net: Optional[str] = None, sample: bool = False):
        self.choice = _NetChoice(net)
        self.sample = bool(sample)

    def check_table(self, game: str, options: dict) -> None:
        self.choice.check_table(game, options)

    @classmethod
    def of(cls, player: NetPlayer, sample: bool = False) -> "NetAgent":
        """An agent playing an already loaded net (the trainer's frozen snapshots)."""
        agent = cls.__new__(cls)
        agent.choice = _NetChoice(None)
        agent.choice.player = player
        agent.sample = bool(sample)
        return agent

    def probabilities(self, observation: Observation) -> np.ndarray:
        """The masked policy over every action id (zeros on the illegal ones)."""
        view = observation.view
        player = self.choice.get(view.variant)
        logits, _ = player.forward(player.encode(view)[None])
        return masked_softmax(logits, observation.action_mask[None])[0]

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        p = self.probabilities(observation)
        if self.sample:
            return sample_action(p, legal, rng.random())
        return int(np.argmax(p))       # first maximum: ties go to the lowest action id


class NetEvaluator(DominoEvaluator):
    """The value head on the evaluator seam (family ``dominoes``): each seat's value of a
    state is the net's value of **that seat's view** of it (``state.observe(seat)``), so
    a sampled world is judged only by what each seat could see there."""

    def __init__(self, net: Optional[str] = None):
        self.choice = _NetChoice(net)

    @classmethod
    def of(cls, player: NetPlayer) -> "NetEvaluator":
        """An evaluator on an already loaded net (the trainer's learner, whose search is
        the teacher of ``--guide ismcts``), as :meth:`NetAgent.of` plays one."""
        evaluator = cls.__new__(cls)
        evaluator.choice = _NetChoice(None)
        evaluator.choice.player = player
        return evaluator

    def check_table(self, game: str, options: dict) -> None:
        self.choice.check_table(game, options)

    def compiled_player(self, variant) -> Optional[Tuple[NetPlayer, int]]:
        """What compiled PUCT (:mod:`pipslab.agents.puct_compiled`) needs to search
        ``variant``'s hands with this net: ``(the net, its encoder's kind in
        compiled.ENCODERS)``, or None where the compiled encoder does not make the net's
        inputs (the Python loop then searches)."""
        from pipslab.envs.dominoes.compiled import ENCODERS
        player = self.choice.get(variant)
        kind, size = ENCODERS.get(player.config["game"], (None, None))
        if kind is None or size != int(player.config["inputs"]):
            return None
        return player, kind

    def _forward(self, states, movers: bool):
        """One forward pass over every seat's view of every unfinished state: ``(values
        (k, players) — a finished state's returns —, the mover's logits per state or None)``."""
        out = np.zeros((len(states), states[0].variant.players if len(states) else 0))
        mover_logits: List[Optional[np.ndarray]] = [None] * len(states)
        rows, where = [], []
        for i, s in enumerate(states):
            if s.is_terminal:
                out[i] = s.returns()
                continue
            player = self.choice.get(s.variant)
            for seat in range(s.variant.players):
                rows.append(player.encode(s.observe(seat)))
                where.append((i, seat))
        if rows:
            logits, values = player.forward(np.stack(rows))
            for r, ((i, seat), v) in enumerate(zip(where, values)):
                out[i, seat] = v
                if movers and seat == states[i].current_player:
                    mover_logits[i] = logits[r]
        return out, mover_logits

    def evaluate(self, states) -> np.ndarray:
        """``(k, players)``: each seat's value head on its own view (a finished state: its returns)."""
        return self._forward(states, False)[0]

    def evaluate_prior(self, states) -> Tuple[np.ndarray, List[Dict[int, float]]]:
        """:meth:`evaluate` and :meth:`prior` from one forward pass (the mover's view is one
        of the rows the values need): what PUCT asks of each new node."""
        values, logits = self._forward(states, True)
        return values, [_policy(s, z) for s, z in zip(states, logits)]

    def values(self, states, seat: int) -> np.ndarray:
        out = np.zeros(len(states))
        rows, where = [], []
        for i, s in enumerate(states):
            if s.is_terminal:
                out[i] = s.returns()[seat]
            else:
                player = self.choice.get(s.variant)
                rows.append(player.encode(s.observe(seat)))
                where.append(i)
        if rows:
            out[where] = player.forward(np.stack(rows))[1]
        return out

    def prior(self, states) -> List[Dict[int, float]]:
        """The policy of the seat to move over its legal actions, from its view, for each
        unfinished state (``{}`` for a finished one)."""
        rows, where = [], []
        for i, s in enumerate(states):
            if not s.is_terminal:
                player = self.choice.get(s.variant)
                rows.append(player.encode(s.observe(s.current_player)))
                where.append(i)
        logits: List[Optional[np.ndarray]] = [None] * len(states)
        if rows:        # one forward pass for every state (inference weighs hundreds at once)
            for i, z in zip(where, player.forward(np.stack(rows))[0]):
                logits[i] = z
        return [_policy(s, z) for s, z in zip(states, logits)]

    def hand_priors(self, state, hands) -> List[Dict[int, float]]:
        """:meth:`prior` of the seat to move holding each of ``hands``, from one
        encoding of its view: the encoders put the viewer's own hand in ``x[0:28]`` and
        nothing else they encode depends on it (``encoding.encode_tiles``), so each row
        is that encoding with its hand's bits; one forward pass for all (tested equal to
        :meth:`prior` on the states themselves)."""
        hands = list(hands)
        if not hands or state.is_terminal:
            return [{} for _ in hands]
        seat = state.current_player
        player = self.choice.get(state.variant)
        x = player.encode(state.observe(seat))
        rows = np.repeat(x[None, :], len(hands), axis=0)
        rows[:, :28] = _hand_bits(hands)
        return [_policy(s, z) for s, z in zip(states_holding(state, hands), player.forward(rows)[0])]


def _hand_bits(hands) -> np.ndarray:
    """``(len(hands), 28)`` float32: the tiles of each hand mask, as the encoders'
    ``x[0:28]`` (``encoding.encode_tiles``: the viewer's own hand)."""
    masks = np.asarray(list(hands), dtype=np.int64).reshape(-1, 1)
    return ((masks >> np.arange(28, dtype=np.int64)) & 1).astype(np.float32)


def _policy(state, logits) -> Dict[int, float]:
    """The softmax of the mover's ``logits`` over ``state``'s legal actions (``{}`` when
    finished): :func:`~pipslab.agents.puct_compiled.legal_softmax`, the compiled search's
    own, so both loops give a node the same prior to the last bit."""
    if logits is None:
        return {}
    from .puct_compiled import legal_softmax
    legal = np.asarray(state.legal_actions(), dtype=np.int64)
    out = np.empty(len(legal))
    legal_softmax(logits, legal, len(legal), out)
    return dict(zip(legal.tolist(), out.tolist()))
