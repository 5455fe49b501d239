"""``pipslab train happy|troshin|triple``: masked PPO of a domino policy in a league.

    pipslab train happy --mode block --hands 300000 --seed 0 --out results/train-happy-block
    pipslab train troshin --players 4 --pairs --out results/train-troshin-4-pairs
    pipslab train happy --out results/train-happy-block --resume           # after Ctrl-C/kill
    pipslab train happy --exploit net --hands 100000 --out results/exploit-net   # best response

What is this trainer's own (the run folder, checkpoints, evaluations, workers and the
learner's device are the skeleton's, :mod:`pipslab.experiments.trainer`):

1. **Play an update's hands** (``batch_hands`` of them, in lock-step).  Each hand's
   table is drawn from its own stream: with probability ``self_play`` the current
   learner plays every seat; otherwise the learner plays one side (a seat, or both seats
   of a pair: partners share the policy and the team's reward) and every other side is
   a **league** opponent.  Whenever some hands wait for the learner, one forward pass
   (numpy, :class:`~pipslab.agents.domino_net.NetPlayer`) gives their policies and
   values and each samples its action; forced moves (one legal action) are played
   without asking and are not training data.  The games run on the compiled engine
   (:mod:`pipslab.envs.dominoes.compiled`: state arrays, the observations encoded in one
   call, the heuristic seats played by :mod:`pipslab.agents.dominoes_compiled`, the
   snapshots waiting batched in one forward pass each) whenever the league's members
   allow it; the Python engine plays the same hands from the same draws (the
   reference, and the road for any other agent in the league).
2. **The update**: each seat's decisions of a hand form a trajectory whose only reward is
   the hand's return for that seat at the end (zero-sum, the game's ``returns()``);
   advantages are GAE(λ) with γ = 1 over the value head, then ``epochs`` passes of
   minibatch Adam on PPO's clipped surrogate, the value loss and an entropy bonus, all
   over the **masked** policy (illegal actions at ``-inf``: probability 0).

Why masked PPO: the action sets are tiny (a handful of legal moves), the episodes short
(6–15 decisions), and the reward comes only at the end — a setting where an on-policy
actor-critic with a learned baseline is simple, stable and cheap per sample, and the
policy it learns is exactly what the ``net`` agent and ISMCTS's prior need.  The games
are luck-heavy, so updates use many hands (512 by default) to keep the gradient's noise
down.

**Guiding by a teacher** (``--guide pimc|oracle|ismcts|AGENT``).  PPO alone learns slowly
here: the reward is one ±1 at the end of a hand that luck decides as much as play, so
its gradient is noise over a small signal — on Happy it levelled off at about
``heaviest``'s and ``suits``' strength (block: 50% against each after 400,000 hands;
draw: 60% against ``heaviest``, 47.5% against ``suits``).  With ``--guide`` the loss
also has ``guide_coef`` times the cross-entropy between the policy and the teacher's
label (its row over its sum: uniform over its best moves, or a visit distribution) at
the learner's decisions, and ``guide_epochs`` more passes of that loss alone over each
update's labels (they are off-policy-safe):

* ``pimc`` (Happy, or Troshin for 2 or 4 in pairs: the games the solver plays) — the
  exact solver's values summed over ``guide_samples`` worlds dealt by ``sample_world``
  from the seat's own view, pimc's own rule: the label is what ``pimc:samples=6`` would
  play, from the information the seat has; with ``--guide-temperature T`` the softmax of
  every move's mean value over those worlds (in hands won) divided by T instead — the
  net then learns the mean over all the labels' worlds, not the noisy best of each
  label's few (:class:`~pipslab.agents.teacher.Teacher`); with ``--guide-weigh W`` each
  label counts in the loss by what a uniform choice among its moves loses against the
  best, in full from W hands — cost-sensitive imitation, the weight on the decisions
  that decide hands;
* ``oracle`` (the same games) — the solver on the true state (Suphx's "oracle guiding"):
  cheaper, but a label from one world is a poor teacher — in most late worlds every move
  wins or every move loses, and the margin it then ranks by is not the win (measured:
  one-world labels left the policy no stronger);
* ``ismcts[:iters=N,c=C,mix=M,target=T]`` (any game) — the root visit counts of PUCT ISMCTS
  guided by **the learner's own net of the update being played** (its policy the prior,
  its value heads the leaves; :func:`~pipslab.agents.search_dominoes.search_many`, every
  labelled decision of a lock-step step searched together, one forward pass per
  iteration), each decision's stream seeded by one draw from its hand's generator;
  ``--guide-noise ALPHA,FRACTION`` mixes AlphaZero's Dirichlet noise into the root's
  prior (default none: the moves played are sampled from the policy already, so the
  noise would only blur the target).  AlphaZero's loop: the search improves on the net,
  the net learns the search's visit distribution, and the next update's search starts
  from the better net (``target=best``: 1 on the most visited moves instead, the move
  the search plays).  Why past ``pimc``: pimc solves each world as if every hand were
  seen (strategy fusion: a move that wins in each world by a different follow-up looks
  safe), and its labels cap the net at pimc's strength; the search plans over the
  seat's information sets only, and it plays the games no solver plays (Triple,
  Troshin for 3), where its own values are the teacher;
* an agent spec (``greedy``) — that agent's move, where no solver plays (Triple).

**Where and how the labels are fitted.**  ``--guide-phases`` names the phases of the
game (``Game.phase_names``, as ``pipslab analyze`` splits error rates) whose decisions
the teacher labels; ``--guide-keep`` teaches every other decision the probabilities of
the policy that played it, so what the teacher does not teach stays as it was;
``--replay N`` keeps the newest N labelled decisions (:class:`Replay`) and each update's
imitation passes draw ``guide_epochs`` times its own labels' count from all of them;
``--fit-every K`` makes the updates rounds (DAgger's): the learner plays K updates with
its net unchanged, their labels joining the buffer, and the round's last update draws
``guide_epochs`` times all the round's labels — one round for the whole run is a fit in
passes over a fixed set; ``--play greedy`` (with ``--explore E``) has the learner play
its most likely move, E of them at random, so it is taught where it plays in a
tournament; ``--replay-from RUN`` starts the buffer with the labels a finished run's
last ring held (:func:`label_source`), so a second round is fitted over the first
round's labels beside its own.  Why: the Happy draw net loses its hands after the
boneyard drops below ten tiles, and a label fitted once, in its own update, at a small
step taught it little there; fitted offline in passes over a large set, labels of the
whole hand by a stronger teacher moved it about a point (docs/training.md, "Where the
draw net loses", which also has what these measured in the trainer), and a fit moved it
with the size of its set, not with the rounds before it.

With ``--epochs 0`` the teacher alone trains the policy — expert iteration (Anthony et
al. 2017): the league's self-play games give the positions, search gives the targets,
and the value head learns the returns (the λ-returns of 2.: the hand's result for the
seat's side, partners sharing it, mixed with the head's own later values by
``gae_lambda``; ``--gae-lambda 1``: the result itself).  Measured on Happy with
``pimc``, from the PPO nets above and 1,000 duplicate games against ``suits``: block
48.8% -> 54.5% after ~60,000 guided hands, draw 51.3% -> 57.3% after ~20,000; it is what
the shipped Happy nets are.

**The league** (why: self-play alone can cycle, chasing its own latest weaknesses).  The
pool holds the built-in agents of ``league`` (``heaviest``, ``suits``, …) and frozen
snapshots of the learner taken every ``snapshot_every`` updates (the last
``max_snapshots``, playing by sampling their policy).  Each non-self-play hand draws
each opposing side's member with probability proportional to
``(1 - s) ** pfsp_power + 0.05``, where ``s`` is the learner's recent score against it
(win 1, draw ½, loss 0; a moving average over updates, starting at ½): prioritised
fictitious self-play — opponents the learner still loses to come back most, beaten ones
rarely but never never.

**The exploiter** (``--exploit SPEC``): a fresh learner trained only against one fixed
opponent (an agent spec: ``net`` — the shipped net, greedy as it plays —, ``net:net=PATH``,
``suits`` …) on every other side, no self-play, no snapshots.  Its final win rate against
that opponent measures how exploitable the opponent is (lower is better for it).

Randomness: the initial weights come from ``seed``; hand ``h`` (counted over the whole
run) is dealt, seated and played from ``numpy.random.default_rng([seed, 2, h])`` — its
deal, its table, the learner's sampled actions and the league agents' choices — so a hand
does not depend on which others share its update; the minibatch order of update ``k``
from ``default_rng([seed, 3, k])``.  Updates are whole and checkpoints fall between them,
so a run stopped and resumed ends with the same weights as one run straight through, and
1 or N workers on either backend give the same weights (tests check both): the workers
play contiguous shards of an update's hands, and the learner computes the log-probabilities
and values of the whole update's decisions itself, in one forward pass.  The workers
sample the moves from float64 forward passes: the last bits a row's probabilities take
from the other rows of its pass are then too small to move a sampled move (in float32
they moved one in a long run; docs/training.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import torch

from pipslab.agents.base import Agent, Observation
from pipslab.agents.belief import Belief
from pipslab.agents.domino_net import (ARCHS, Mirror, NetAgent, NetPlayer, PolicyNet, encoder_layout, grow,
                                       masked_softmax, net_dict, net_from, net_spec, read_net, sample_actions)
from pipslab.agents.registry import make_agent
from pipslab.agents.search_dominoes import check_noise
from pipslab.agents.teacher import LABELS, LEARNER, Teacher, guide_search
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game

from . import trainer as skeleton
from .trainer import number, whole

# the self-play players' float type: in float32 a row's last bits hang on the other rows
# of its forward pass, enough to move a sampled move and so make a long run's weights
# depend on the worker count (NetPlayer's docstring)
SELF_PLAY_DTYPE = np.float64

PLAYS = ("sample", "greedy")   # --play: how the learner picks the moves it plays

# per game: the built-in league members and the curve's opponents (the variant's best
# search agent at a small budget last); another domino game gets the first three
LEAGUE = {"happy": ["random", "heaviest", "suits"],
          "troshin": ["random", "heaviest", "suits", "partner"],
          "triple": ["random", "heaviest", "suits", "greedy"]}
EVAL_AGAINST = {"happy": ["heaviest", "suits", "pimc:samples=5"],
                "troshin": ["heaviest", "suits", "ismcts:iters=100"],
                "triple": ["heaviest", "suits", "greedy"]}


@dataclass
class TrainArgs(skeleton.TrainArgs):
    """Masked PPO's settings in a league, with an optional teacher (its own fields, then
    the skeleton's)."""

    hands: int = 200_000
    """training hands (rounded up to whole updates)"""
    hidden: List[int] = field(default_factory=lambda: [128, 128])
    """hidden layer sizes"""
    arch: str = "mlp"
    """the net: mlp (every action's logit read from the last hidden layer) or placements (every placement scored by one shared small net of its tile and the ends it meets)"""
    mirror: bool = False
    """the net reads each position with the line turned to one canonical order (Happy, Troshin: the rules treat the two ends alike), so every label teaches a position and its mirror"""
    lr: float = 3e-4
    """Adam's step size"""
    batch_hands: int = 512
    """hands played in lock-step per update"""
    minibatch: int = 1024
    """decisions per gradient step"""
    epochs: int = 4
    """PPO passes over an update's decisions (0: none, the teacher alone: expert iteration)"""
    clip: float = 0.2
    """PPO's clipping of the probability ratio"""
    gae_lambda: float = 0.95
    """λ of the advantages (GAE, γ = 1)"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    self_play: float = 0.5
    """share of hands where the learner plays every seat"""
    league: Optional[List[str]] = None
    """the league's built-in members, agent specs (default: the game's)"""
    snapshot_every: int = 25
    """updates between frozen snapshots of the learner joining the league"""
    max_snapshots: int = 8
    """snapshots kept in the league"""
    pfsp_power: float = 2.0
    """prioritised fictitious self-play: a member is drawn with weight (1 - score)^power + 0.05"""
    exploit: str = ""
    """train a fresh best response against this one agent instead (e.g. net, suits)"""
    guide: str = ""
    """also imitate a teacher: pimc (the solver over worlds dealt from the seat's view), oracle (the solver on the true state), ismcts[:iters=N,c=C,mix=M,target=T] (the visit counts of ISMCTS guided by the learner's own net; target=best: 1 on its most visited moves) or an agent spec"""
    guide_coef: float = 1.0
    """weight of the imitation loss at the start"""
    guide_hands: int = 0
    """hands over which the imitation weight falls to 0 (0: kept all run)"""
    guide_share: float = 1.0
    """share of the learner's decisions the teacher labels"""
    guide_samples: int = 6
    """pimc: worlds solved per label"""
    guide_infer: str = ""
    """pimc: weigh its worlds by how likely the other seats' own moves were under this model (an evaluator with a prior: net, net:NAME; learner: the learner's own net), as pimc:infer does (default none)"""
    guide_floor: float = 0.1
    """pimc with --guide-infer: the share of a uniform choice mixed into the model's probabilities"""
    guide_temperature: float = 0.0
    """pimc, oracle: teach the softmax of each move's mean value (in hands won) at this temperature instead of 1 on the best moves (0)"""
    guide_weigh: float = 0.0
    """pimc, oracle: weigh each label by the hands a uniform choice among its moves loses against the best, in full from this many (0: all alike)"""
    guide_epochs: int = 8
    """passes of the imitation loss alone over each update's labels"""
    guide_noise: List[float] = field(default_factory=list)
    """ismcts: AlphaZero's root Dirichlet noise ALPHA,FRACTION in the teacher's search (default none)"""
    guide_phases: List[str] = field(default_factory=list)
    """label only the decisions in these phases of the game, as pipslab analyze names them (e.g. boneyard 5-9,boneyard 1-4,boneyard empty; default all)"""
    guide_keep: bool = False
    """teach a decision the teacher leaves unlabelled the policy that played it (what the teacher does not teach is kept)"""
    replay: int = 0
    """labelled decisions kept across updates, the newest (a replay buffer); each update's imitation passes draw guide-epochs times its own labels' count from it (0: each update's labels alone)"""
    replay_from: str = ""
    """--replay: a finished run folder of the same game and options whose buffer (the labelled decisions its last ring held) fills this run's before the first update, joining the first round's labels (in a recipe: an earlier stage's name)"""
    fit_every: int = 1
    """--replay: updates per round; the learner plays this many updates with its net unchanged, then the imitation passes draw guide-epochs times the round's labels' count from the buffer (a DAgger round; one round for the whole run: the offline fit)"""
    play: str = "sample"
    """how the learner picks the moves it plays while it learns: sample (from its policy, as PPO needs) or greedy (its most likely move, as it plays in a tournament; imitation only, --epochs 0)"""
    explore: float = 0.0
    """--play greedy: the share of moves picked uniformly among the legal ones instead"""
    checkpoint_every: int = 10
    """updates between checkpoints"""
    game: str = field(default="happy", metadata={"cli": False})

    def __post_init__(self):
        if self.league is None and self.game:
            self.league = list(LEAGUE.get(self.game, LEAGUE["happy"]))

    @property
    def variant(self) -> str:
        return get_game(self.game).variant_label(self.options)

    def validate(self) -> None:
        super().validate()
        net_spec(self.game, self.options)        # checks the options (pairs needs 4 players, no match)
        for name in ("hands", "batch_hands", "minibatch", "snapshot_every", "max_snapshots", "guide_samples"):
            whole(self, name)
        for name in ("epochs", "guide_hands", "guide_epochs"):
            whole(self, name, 0)
        if not self.epochs and not (self.guide and self.guide_epochs):
            raise PipslabError("--epochs 0 (no PPO) needs --guide with --guide-epochs: the teacher's moves to learn")
        number(self, "lr", 0, 1, open_low=True)
        number(self, "clip", 0, 1, open_low=True)
        for name in ("gae_lambda", "self_play", "guide_share"):
            number(self, name, 0, 1)
        for name in ("ent_coef", "vf_coef", "pfsp_power", "guide_coef"):
            number(self, name, 0, 100)
        if self.arch not in ARCHS:
            raise PipslabError(f"--arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if self.arch != "mlp":
            encoder_layout(net_spec(self.game, self.options))     # one line where the encoder declares none
        if self.mirror:
            try:
                Mirror(net_spec(self.game, self.options))      # the one place that says which lines turn round
            except PipslabError as exc:
                raise PipslabError(f"--mirror: {exc}") from None
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= 4096
                                  for h in self.hidden):
            raise PipslabError(f"--hidden must list layer sizes from 1 to 4096, got {self.hidden!r}")
        for spec in self.league + self.eval_against + ([self.exploit] if self.exploit else []):
            make_agent(spec, self.game)          # a bad spec fails now, with one line
        if self.guide in ("oracle", "pimc"):
            refusal = get_game(self.game).solver_support(self.options)
            if refusal is not None:
                raise PipslabError(f"--guide {self.guide} needs the exact solver: {refusal}")
        elif self.guide and guide_search(self.guide, self.game) is None:
            make_agent(self.guide, self.game)     # --guide AGENT: a bad spec fails now
        if self.guide_infer:
            if self.guide != "pimc":
                raise PipslabError("--guide-infer weighs the worlds of the pimc teacher: give --guide pimc")
            if self.guide_infer == LEARNER:
                number(self, "guide_floor", 0, 0.999)
            else:
                Belief(self.guide_infer, self.guide_floor)      # a model without a prior, a bad floor: one line
        number(self, "guide_temperature", 0, 100)
        if self.guide_temperature and self.guide not in ("pimc", "oracle"):
            raise PipslabError("--guide-temperature softens the labels of the solver teachers: give --guide pimc or oracle")
        number(self, "guide_weigh", 0, 100)
        if self.guide_weigh and self.guide not in ("pimc", "oracle"):
            raise PipslabError("--guide-weigh weighs the labels of the solver teachers by their moves' values: "
                               "give --guide pimc or oracle")
        if self.guide_phases:
            if not self.guide:
                raise PipslabError("--guide-phases chooses the decisions the teacher labels: give --guide")
            try:
                get_game(self.game).check_phases(self.guide_phases, self.options)
            except PipslabError as exc:
                raise PipslabError(f"--guide-phases: {exc}") from None
        whole(self, "replay", 0, 10**8)
        if (self.guide_keep or self.replay) and not (self.guide and self.guide_epochs):
            raise PipslabError(f"--{'guide-keep' if self.guide_keep else 'replay'} works on the imitation passes: "
                               "give --guide with --guide-epochs")
        if self.replay_from:
            if not self.replay:
                raise PipslabError("--replay-from fills the replay buffer with another run's labels: give --replay")
            label_source(self.replay_from, self.game, self.options)
        whole(self, "fit_every", 1, 10**8)
        if self.fit_every > 1 and not (self.replay and not self.epochs):
            raise PipslabError("--fit-every gathers rounds of labels in the replay buffer between fits: "
                               "give --replay with --epochs 0 (imitation only)")
        if self.play not in PLAYS:
            raise PipslabError(f"--play must be one of {', '.join(PLAYS)}, got {self.play!r}")
        if self.play == "greedy" and self.epochs:
            raise PipslabError("--play greedy plays moves the policy did not sample, which PPO cannot learn from: "
                               "give --epochs 0 (imitation only)")
        number(self, "explore", 0, 1)
        if self.explore and self.play != "greedy":
            raise PipslabError("--explore is the share of random moves of --play greedy")
        if self.guide_noise:
            if not self.guide or guide_search(self.guide, self.game) is None:
                raise PipslabError("--guide-noise is the root noise of the ismcts teacher's search: give --guide ismcts")
            check_noise(self.guide_noise, "--guide-noise")
        if not self.exploit and not self.league and self.self_play < 1:
            raise PipslabError("--league is empty: give agents, or --self-play 1")

    def guide_weight(self, hands: int) -> float:
        """The imitation loss's weight after ``hands`` training hands."""
        if not self.guide:
            return 0.0
        if not self.guide_hands:
            return self.guide_coef
        return self.guide_coef * max(0.0, 1.0 - hands / self.guide_hands)


# ------------------------------------------------------------------- the replay buffer
class Replay:
    """The newest ``size`` labelled decisions of the run (``--replay``): their observations,
    masks, labels (over their sums: the imitation targets) and returns, in a ring on the
    learner's device (decision number ``r``, counted over the run, in slot ``r % size``).
    Why: a label fitted once, in its own update, at a small step taught the draw net
    little; fitted offline in passes over a large set, labels moved it (docs/training.md,
    "Where the draw net loses").  Each update's rows are also written to
    ``FOLDER/FIRST.npz`` (FIRST: the number of its first decision), so ``--resume``
    refills the ring from the files a checkpoint needs; files no checkpoint can need any
    more are removed."""

    def __init__(self, size: int, folder: Path, width: int, num_actions: int, device):
        self.size, self.folder, self.device = size, Path(folder), device
        self.X = torch.zeros((0, width), dtype=torch.float32, device=device)     # grown as rows come
        self.M = torch.zeros((0, num_actions), dtype=torch.bool, device=device)
        self.T = torch.zeros((0, num_actions), dtype=torch.float32, device=device)
        self.R = torch.zeros(0, dtype=torch.float32, device=device)
        self.written = 0            # decisions added over the run
        self.kept_from = 0          # the first decision the last checkpoint's ring held
        self.fitted = 0             # decisions added before the last fit (--fit-every)

    def __len__(self) -> int:
        return min(self.written, self.size)

    def _put(self, first: int, X, M, T, R) -> None:
        """Decisions ``first ..`` into their slots, those still among the newest ``size``."""
        lo = max(first, self.written - self.size)
        if lo >= first + len(X):
            return
        need = min(self.size, self.written)
        if len(self.X) < need:          # the ring grows (doubling) until it holds ``size``
            grown = min(self.size, max(need, 2 * len(self.X)))
            for name in ("X", "M", "T", "R"):
                old = getattr(self, name)
                new = torch.zeros((grown, *old.shape[1:]), dtype=old.dtype, device=self.device)
                new[:len(old)] = old
                setattr(self, name, new)
        slots = torch.arange(lo, first + len(X), device=self.device) % self.size
        k = lo - first
        self.X[slots] = torch.as_tensor(X[k:], device=self.device)
        self.M[slots] = torch.as_tensor(M[k:], device=self.device) != 0
        T = torch.as_tensor(T[k:], device=self.device).float()
        self.T[slots] = T / T.sum(-1, keepdim=True).clamp(min=1.0)     # the imitation target, as ppo_update makes it
        self.R[slots] = torch.as_tensor(R[k:], device=self.device).float()

    def add(self, X, M, T, R, copy_of: Optional[Path] = None) -> None:
        """One update's labelled decisions (numpy rows), kept and written to its file
        (``copy_of``: a file holding exactly these rows, copied rather than compressed again)."""
        if not len(X):
            return
        import shutil

        from .files import atomic_path
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.folder / f"{self.written:012d}.npz", suffix=".npz") as tmp:
            if copy_of is not None:
                shutil.copyfile(copy_of, tmp)
            else:
                np.savez_compressed(tmp, X=X, M=M, T=T, R=R)
        first, self.written = self.written, self.written + len(X)
        self._put(first, X, M, T, R)

    def take(self, source: "LabelSource") -> int:
        """The decisions another run's last ring held (``--replay-from``), added as this
        run's first, in their order; returns how many.  Whole files are copied, not
        compressed again."""
        taken = 0
        for first, path in source.files:
            try:
                with np.load(path) as d:
                    X, M, T, R = d["X"], d["M"], d["T"], d["R"]
            except (OSError, ValueError, KeyError):
                raise PipslabError(f"--replay-from: {path} is damaged; its run's labels cannot be taken") from None
            lo, hi = max(0, source.first - first), min(len(X), source.written - first)
            self.add(X[lo:hi], M[lo:hi], T[lo:hi], R[lo:hi], copy_of=path if (lo, hi) == (0, len(X)) else None)
            taken += hi - lo
        return taken

    def files(self) -> Dict[int, Path]:
        return replay_files(self.folder)

    def state(self) -> dict:
        """What a checkpoint keeps (the files hold the rows); the files the previous
        checkpoint needed and this one does not are removed."""
        keep = max(0, self.written - self.size)
        files = self.files()
        starts = sorted(files)
        for a, b in zip(starts, starts[1:] + [self.written]):
            if b <= min(keep, self.kept_from):
                files[a].unlink(missing_ok=True)
        self.kept_from = keep
        return {"written": self.written, "fitted": self.fitted}

    def load(self, state: dict, where: Path) -> None:
        """The ring of a checkpoint (:meth:`state`), refilled from the files."""
        written = self.written = int(state["written"])
        self.fitted = int(state.get("fitted", written))     # a checkpoint from before --fit-every fitted each update
        need = max(0, written - self.size)
        covered = written
        for a, path in files_back_to(self.files(), need, written):
            try:
                with np.load(path) as d:
                    X, M, T, R = d["X"], d["M"], d["T"], d["R"]
            except (OSError, ValueError, KeyError):
                break
            if a + len(X) != covered:
                break
            self._put(a, X, M, T, R)
            covered = a
        if covered > need:
            raise PipslabError(f"{where}: the replay buffer's files in {self.folder} are missing or damaged; "
                               "the run cannot be resumed")
        self.kept_from = need

    def tensors(self):
        n = len(self)
        return self.X[:n], self.M[:n], self.T[:n], self.R[:n]


def replay_files(folder: Path) -> Dict[int, Path]:
    """A run's replay files by the number of their first decision."""
    return {int(f.stem): f for f in Path(folder).glob("*.npz") if f.stem.isdigit()}


def files_back_to(files: Dict[int, Path], first: int, written: int) -> List[tuple]:
    """``(first decision, path)`` of the files that hold decisions ``first .. written``,
    newest first, the last one reaching back to ``first`` where the files do."""
    out = []
    for a in sorted((a for a in files if a < written), reverse=True):
        if (out[-1][0] if out else written) <= first:
            break
        out.append((a, files[a]))
    return out


@dataclass
class LabelSource:
    """The labelled decisions a finished run's last ring held: numbers ``first ..
    written`` of that run, in ``files`` (``(first decision, path)``, in order)."""
    folder: Path
    first: int
    written: int
    files: List[tuple]


def label_source(folder: str, game: str, options: dict) -> LabelSource:
    """``--replay-from FOLDER``, checked: a finished training run of the same game and
    options, its checkpoint's ring and the files that hold it; anything else is one line.
    Why: the draw net moved with the labels of one fit, not with the rounds they came in
    (docs/training.md), so a stage may fit its own labels beside an earlier stage's."""
    import json

    from .trainer import CHECKPOINT
    where = Path(folder)
    try:
        run = json.loads((where / "run.json").read_text())
        settings, status = run["settings"], run["status"]
        size, their = int(settings["replay"]), (settings["game"], settings.get("options") or {})
    except (OSError, ValueError, KeyError, TypeError):
        raise PipslabError(f"--replay-from: {folder!r} holds no training run (no readable run.json)") from None
    g = get_game(game)
    if their[0] != game or g.variant_label(their[1]) != g.variant_label(options):
        raise PipslabError(f"--replay-from: {folder!r} trained {get_game(their[0]).variant_label(their[1])}, "
                           f"this run {g.variant_label(options)}")
    if status != "done":
        raise PipslabError(f"--replay-from: {folder!r} is not finished (its run is {status}); finish it first")
    if not size:
        raise PipslabError(f"--replay-from: {folder!r} kept no replay buffer (it ran without --replay)")
    try:
        written = int(read_net(where / CHECKPOINT)["replay"]["written"])
    except (KeyError, TypeError, ValueError):
        raise PipslabError(f"--replay-from: {where / CHECKPOINT} holds no replay buffer") from None
    first = max(0, written - size)
    files = files_back_to(replay_files(where / "replay"), first, written)
    if (files[-1][0] if files else written) > first:
        raise PipslabError(f"--replay-from: the replay files in {where / 'replay'} do not reach back to decision "
                           f"{first:,}; its labels cannot be taken")
    return LabelSource(where, first, written, files[::-1])


# ------------------------------------------------------------------- the league
class League:
    """The pool of opponents and the learner's recent score against each (module
    docstring).  Members are agent specs (``heaviest``) and frozen snapshots
    (``snapshot-<update>``, their weights kept here)."""

    def __init__(self, args: TrainArgs):
        self.args = args
        fixed = [args.exploit] if args.exploit else list(args.league)
        self.members: List[str] = fixed
        self.scores: Dict[str, float] = {m: 0.5 for m in fixed}
        self.snapshots: Dict[str, dict] = {}       # name -> state dict
        self._players: Dict[str, NetPlayer] = {}

    def weights(self) -> np.ndarray:
        s = np.array([self.scores[m] for m in self.members])
        return (1.0 - s) ** self.args.pfsp_power + 0.05

    def draw(self, rng: np.random.Generator, cdf: Optional[np.ndarray] = None) -> str:
        """A member drawn by its PFSP weight: ``rng.choice(len(w), p=w / w.sum())``'s very
        draw (one uniform against the cumulative weights), ``cdf`` being :meth:`cdf` when
        already at hand — an update draws hundreds of members from unchanged weights."""
        c = self.cdf() if cdf is None else cdf
        return self.members[int(c.searchsorted(rng.random(), side="right"))]

    def cdf(self) -> np.ndarray:
        """The members' cumulative weights, normalised as ``Generator.choice`` does."""
        w = self.weights()
        c = np.cumsum(w / w.sum())
        return c / c[-1]

    def agent(self, member: str, config: dict) -> Agent:
        if member in self.snapshots:
            return NetAgent.of(self.net_player(member, config), sample=True)
        return make_agent(member, self.args.game)

    def net_player(self, member: str, config: dict) -> NetPlayer:
        """The frozen net of a snapshot member (loaded once)."""
        if member not in self._players:
            net = PolicyNet(config)
            net.load_state_dict(self.snapshots[member])
            self._players[member] = NetPlayer(net, member, dtype=SELF_PLAY_DTYPE)
        return self._players[member]

    def add_snapshot(self, name: str, net: PolicyNet) -> None:
        self.snapshots[name] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.members.append(name)
        # a new snapshot starts where its parent stands: about even with the learner
        self.scores[name] = 0.5
        old = [m for m in self.members if m in self.snapshots]
        for m in old[:-self.args.max_snapshots]:
            self.members.remove(m)
            del self.snapshots[m], self.scores[m]
            self._players.pop(m, None)

    def record(self, results: Dict[str, List[float]]) -> None:
        for m, scores in results.items():
            if m in self.scores and scores:
                self.scores[m] = 0.9 * self.scores[m] + 0.1 * float(np.mean(scores))

    def state(self) -> dict:
        return {"members": list(self.members), "scores": dict(self.scores), "snapshots": self.snapshots}

    def load(self, data: dict) -> None:
        self.members = [str(m) for m in data["members"]]
        self.scores = {str(k): float(v) for k, v in data["scores"].items()}
        self.snapshots = {str(k): v for k, v in data["snapshots"].items()}
        self._players = {}


# ------------------------------------------------------------------- self-play
@dataclass
class Batch:
    """An update's learner decisions, in play order per trajectory."""
    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray
    teacher: np.ndarray           # per decision: the teacher's label (LABELS: 1 on its best moves or visit counts; all 0: not labelled)
    hands: int
    decisions: int
    results: Dict[str, List[float]]


def play_hands(player: NetPlayer, league: League, args: TrainArgs, first_hand: int, count: int,
               label: bool = False, teacher: Optional[Teacher] = None, compiled: bool = True) -> Batch:
    """Hands ``first_hand .. first_hand + count - 1`` in lock-step (module docstring, 1.)
    and their GAE advantages (2.); with ``label``, the teacher's best moves of (a share of)
    the learner's decisions (``teacher``: one kept across updates, else a new one).

    The games run on the compiled engine (:func:`_play_compiled`) when every league member
    of the run is a built-in heuristic, ``random`` or a snapshot; else, or with
    ``compiled=False``, on the Python engine (:func:`_play_reference`, the reference).
    Both make the same draws from each hand's generator in the same order, so they play
    the same hands (up to the rounding of a snapshot's forward pass, which the compiled
    path makes for many decisions at once)."""
    traj, finals, results = play_part(player, league, args, first_hand, count, label, teacher, compiled)
    game = get_game(args.game)
    return traj.batch(finals, args.gae_lambda, count, game.observation_encoder(args.options).size,
                      game.actions(args.options), results)


def play_part(player: NetPlayer, league: League, args: TrainArgs, first_hand: int, count: int,
              label: bool = False, teacher: Optional[Teacher] = None, compiled: bool = True):
    """:func:`play_hands` before the advantages: ``(steps, finals, results)``."""
    teacher = (teacher or new_teacher(args)) if label else None     # ismcts: guided by ``player``
    game = get_game(args.game)
    opts = game.resolve(args.options)
    teams = game.teams(opts)
    n = game.players(opts)
    num_actions = game.actions(opts)
    fast = compiled and _compiled_league(league, args)
    if fast:    # the deals as arrays: engine.deal's, from the same draws
        from pipslab.envs.dominoes.compiled import deal_like_engine
        variant = game.new_state(np.random.default_rng(0), opts).variant
    cdf = league.cdf()
    states, rngs, seat_members, opponent_of, learner_seats = [], [], [], [], []
    for h in range(count):
        rng = np.random.default_rng([args.seed, 2, first_hand + h])
        state = deal_like_engine(variant, rng) if fast else game.new_state(rng, opts)
        members: List[Optional[str]] = [None] * n
        if args.exploit or rng.random() >= args.self_play:
            mine = teams[int(rng.integers(n))]          # the learner's side
            drawn: Dict[int, str] = {}
            for seat in range(n):
                if teams[seat] != mine:
                    if teams[seat] not in drawn:
                        drawn[teams[seat]] = league.draw(rng, cdf)
                    members[seat] = drawn[teams[seat]]
        states.append(state)
        rngs.append(rng)
        seat_members.append(members)
        opponent_of.append(sorted({m for m in members if m is not None}))
        learner_seats.append([s for s in range(n) if members[s] is None])
    if fast:
        traj, finals = _play_compiled(player, league, args, variant, states, rngs, seat_members, teacher,
                                      num_actions)
    else:
        traj, finals = _play_reference(player, league, args, states, rngs, seat_members, teacher, num_actions)
    results: Dict[str, List[float]] = {}
    for h in range(count):
        if opponent_of[h]:
            r = finals[h][learner_seats[h][0]]
            for m in opponent_of[h]:
                results.setdefault(m, []).append(1.0 if r > 0 else 0.5 if r == 0 else 0.0)
    return traj, finals, results


class _Steps:
    """The learner's decisions of an update, a block of rows per forward pass, and their
    trajectories — a seat's decisions of a hand, in the order the trajectories began."""

    def __init__(self):
        self.blocks = []                 # (X, M, actions, log p, values, labels) per forward pass
        self.who: List[tuple] = []       # (hand, seat) of every row, in play order

    def add(self, X, M, actions, logp, values, labels, who) -> None:
        self.blocks.append((X, M, actions, logp, values, labels))
        self.who += who

    @classmethod
    def joined(cls, parts, first_hand: int) -> tuple:
        """Shards of one update (``(steps, finals, results, first)`` each, in order) as one
        ``(steps, finals, results)``, hands numbered from ``first_hand``."""
        out, finals, results = cls(), [], {}
        for steps, fin, res, first in parts:
            off = first - first_hand
            out.blocks += steps.blocks
            out.who += [(h + off, p) for h, p in steps.who]
            finals += fin
            for m, scores in res.items():
                results.setdefault(m, []).extend(scores)
        return out, finals, results

    def batch(self, finals, lam: float, hands: int, size: int, num_actions: int, results,
              net: Optional[PolicyNet] = None) -> "Batch":
        """The rows in trajectory order with their advantages: GAE(λ), γ = 1, a
        trajectory's only reward its seat's return at the end.  With ``net`` the
        log-probabilities of the chosen actions and the values are computed again by it,
        in one forward pass over the rows in that order — so they do not depend on which
        rows a worker's forward passes grouped (the trainer's road)."""
        if not self.who:
            return Batch(obs=np.zeros((0, size), dtype=np.float32), masks=np.zeros((0, num_actions), dtype=np.int8),
                         actions=np.zeros(0, dtype=np.int64), logp=np.zeros(0, dtype=np.float32),
                         values=np.zeros(0, dtype=np.float32), advantages=np.zeros(0, dtype=np.float32),
                         returns=np.zeros(0, dtype=np.float32), teacher=np.zeros((0, num_actions), dtype=LABELS),
                         hands=hands, decisions=0, results=results)
        # trajectories by hand, then in the order their seats first moved in it; steps in
        # time order: an order that does not depend on which hands shared a forward pass
        first: Dict[tuple, int] = {}
        for i, w in enumerate(self.who):
            first.setdefault(w, i)
        ids = {w: k for k, w in enumerate(sorted(first, key=lambda w: (w[0], first[w])))}
        tid = np.array([ids[w] for w in self.who], dtype=np.int64)
        order = np.argsort(tid, kind="stable")
        X, M, A, L, V, T = (np.concatenate([b[k] for b in self.blocks])[order] for k in range(6))
        if net is not None:
            device = next(net.parameters()).device
            with torch.no_grad():
                logits, values = net(torch.from_numpy(X).to(device))
                logp = torch.log_softmax(logits.masked_fill(torch.from_numpy(M).to(device) == 0, float("-inf")), -1)
                L = logp.gather(1, torch.from_numpy(A).to(device)[:, None])[:, 0].double().cpu().numpy()
                V = values.double().cpu().numpy()
        tids = tid[order].tolist()
        vals = V.tolist()
        final = [float(finals[h][p]) for h, p in ids]
        adv = [0.0] * len(vals)
        a_next = 0.0
        for i in range(len(vals) - 1, -1, -1):
            if i == len(vals) - 1 or tids[i + 1] != tids[i]:     # a trajectory's last step
                nxt, a_next = final[tids[i]], 0.0
            else:
                nxt = vals[i + 1]
            a_next = nxt - vals[i] + lam * a_next
            adv[i] = a_next
        adv64 = np.array(adv)
        return Batch(obs=X, masks=M, actions=A, logp=L.astype(np.float32), values=V.astype(np.float32),
                     advantages=adv64.astype(np.float32), returns=(adv64 + V).astype(np.float32), teacher=T,
                     hands=hands, decisions=len(vals), results=results)


def greedy_actions(logits: np.ndarray, masks: np.ndarray, u: np.ndarray, explore: float) -> np.ndarray:
    """``--play greedy``: each row's most likely legal move, or — where its draw ``u`` falls
    below ``explore`` — the legal move ``u / explore`` of the way along the legal ones
    (uniform, from the one draw a sampled move takes).  Why: the positions a net is taught
    in are then those it meets when it plays greedily, as in a tournament, with a few
    off its line (the offline fits that moved the draw net were made so: docs/training.md)."""
    best = np.where(masks > 0, logits, -np.inf).argmax(1)
    for i in np.flatnonzero(u < explore).tolist():
        legal = np.flatnonzero(masks[i])
        best[i] = legal[min(len(legal) - 1, int(u[i] / explore * len(legal)))]
    return best


def _learner_moves(player: NetPlayer, args: TrainArgs, X, M, waiting, label_many, rngs, teacher, steps: _Steps,
                   num_actions: int, apply_all) -> None:
    """One forward pass for every learner decision waiting (``(hand, seat)`` pairs, their
    observation rows ``X`` and masks ``M``): sample each action from the hand's
    generator (``--play greedy``: :func:`greedy_actions` from the same draw), label (a
    share of) them by the teacher (``label_many(pairs)``: their
    :data:`~pipslab.agents.teacher.LABELS` rows, all in one call), play them all with ``apply_all(hands, actions)``
    and add the rows to ``steps``.  Each hand's draws come in the same order: its action,
    its share, its teacher's."""
    logits, values = player.forward(X)
    probs = masked_softmax(logits, M)
    u = np.array([rngs[h].random() for h, _ in waiting])
    chosen = greedy_actions(logits, M, u, args.explore) if args.play == "greedy" else sample_actions(probs, M, u)
    labels = np.zeros((len(waiting), num_actions), dtype=LABELS)
    if teacher is not None:
        sel = [i for i, (h, p) in enumerate(waiting) if rngs[h].random() < args.guide_share]
        if sel:
            labels[sel] = label_many([waiting[i] for i in sel])
        if args.guide_keep:
            kept = labels.sum(-1) == 0
            labels[kept] = probs[kept]
    logp = np.array([math.log(x) if x > 0 else -math.inf for x in probs[np.arange(len(waiting)), chosen].tolist()])
    steps.add(X, M, chosen.astype(np.int64), logp, values.astype(np.float64), labels, list(waiting))
    apply_all([h for h, _ in waiting], chosen.tolist())


def _play_reference(player: NetPlayer, league: League, args: TrainArgs, states, rngs, seat_members, teacher,
                    num_actions: int):
    """The hands on the Python engine, every league seat asked through its agent
    (``(trajectories, final returns per hand)``)."""
    encode = player.encode
    game = get_game(args.game)
    teams = game.teams(game.resolve(args.options))
    seat_agents = []
    for members in seat_members:
        agents: List[Optional[Agent]] = [None] * len(members)
        made: Dict[int, Agent] = {}
        for seat, m in enumerate(members):
            if m is not None:           # one agent per opposing side, as the harness seats a side
                if teams[seat] not in made:
                    made[teams[seat]] = league.agent(m, player.config)
                    made[teams[seat]].member = m
                agents[seat] = made[teams[seat]]
                agents[seat].reset(seat)
        seat_agents.append(agents)
    traj = _Steps()
    alive = list(range(len(states)))
    while alive:
        waiting, rows, masks = [], [], []
        still = []
        for h in alive:
            s, rng = states[h], rngs[h]
            while not s.is_terminal:
                p = s.current_player
                legal = s.legal_actions()
                if len(legal) == 1:
                    s.apply(legal[0])
                    continue
                agent = seat_agents[h][p]
                view = s.observe(p)
                if agent is not None:
                    s.apply(agent.act(Observation(p, view, legal, num_actions), rng))
                    continue
                m = np.zeros(num_actions, dtype=np.int8)
                m[legal] = 1
                waiting.append((h, p))
                rows.append(encode(view))
                masks.append(m)
                break
            if not s.is_terminal:
                still.append(h)
        alive = still
        if not waiting:
            break
        def apply_all(hands, actions):
            for h, a in zip(hands, actions):
                states[h].apply(a)
        def label_many(pairs):
            return teacher.label_states([states[h] for h, _ in pairs], [rngs[h] for h, _ in pairs], player)
        _learner_moves(player, args, np.stack(rows), np.stack(masks), waiting, label_many, rngs, teacher, traj,
                       num_actions, apply_all)
    return traj, [s.returns() for s in states]


def _compiled_league(league: League, args: TrainArgs) -> bool:
    """Whether the compiled self-play can play every member of the league: the built-in
    heuristics (:mod:`pipslab.agents.dominoes_compiled`), ``random`` and snapshots."""
    from pipslab.agents.dominoes_compiled import KINDS
    from pipslab.envs.dominoes.compiled import ENCODERS
    if args.game not in ENCODERS:
        return False
    return all(m in KINDS or m in league.snapshots for m in league.members)


def _play_compiled(player: NetPlayer, league: League, args: TrainArgs, variant, deals, rngs, seat_members,
                   teacher, num_actions: int):
    """The hands on the compiled engine (``(trajectories, final returns per hand)``),
    from their deals as arrays (``deals``, ``compiled.deal_like_engine``'s):
    :func:`~pipslab.agents.dominoes_compiled.advance` plays forced moves and the
    heuristic seats; a ``random`` seat draws from the hand's generator as
    :class:`~pipslab.agents.random_agent.RandomAgent` does; the snapshots waiting, then
    the learners waiting, each get one forward pass over the compiled observations.  The
    teacher labels every waiting decision in one call (:meth:`Teacher.label_many`: pimc's
    worlds dealt and solved, or the oracle's positions solved, straight from the arrays in
    one compiled call where it can; else from the hand's Python state, made from the deal
    and brought up to date from the log of moves when it is asked)."""
    from pipslab.agents import dominoes_compiled as dc
    from pipslab.envs.dominoes import compiled as cc
    count = len(deals)
    prm = cc.params(variant)
    kind, size = cc.ENCODERS[args.game]
    S = np.stack(deals)
    kinds = np.full((count, 4), dc.LEARNER, dtype=np.int64)
    nets: Dict[str, NetPlayer] = {}
    for h, members in enumerate(seat_members):
        for seat, m in enumerate(members):
            if m is None:
                continue
            if m in dc.KINDS:
                kinds[h, seat] = dc.KINDS[m]
            else:
                kinds[h, seat] = dc.NET
                if m not in nets:
                    nets[m] = league.net_player(m, player.config)
    moves = np.zeros((count, dc.MAX_MOVES), dtype=np.int64)
    nmoves = np.zeros(count, dtype=np.int64)
    legal_out = np.zeros((count, cc.MAX_ACTIONS), dtype=np.int64)
    nlegal = np.zeros(count, dtype=np.int64)
    status = np.zeros(count, dtype=np.int64)
    shadows: List = [None] * count
    synced = [0] * count

    def state_of(h):                 # the Python state, for the teacher (made when first asked)
        s = shadows[h]
        if s is None:
            s = shadows[h] = cc.reference_state(variant, deals[h])
        for a in moves[h, synced[h]:nmoves[h]].tolist():
            s.apply(a)
        synced[h] = int(nmoves[h])
        return s

    def label_many(pairs):
        hs = [h for h, _ in pairs]
        return teacher.label_many(S, hs, [rngs[h] for h in hs], [deals[h][cc.S_OPENING] for h in hs], state_of,
                                  player)

    n = variant.players

    def play_all(hands, actions):
        dc.play_many(prm, S, np.asarray(hands, dtype=np.int64), np.asarray(actions, dtype=np.int64), moves, nmoves)

    def observations(hs):
        idx = np.array(hs, dtype=np.int64)
        rows = np.empty((len(hs), size), dtype=np.float32)
        cc.encode_rows(kind, prm, S, idx, S[idx, cc.S_CUR], rows)
        masks = np.empty((len(hs), num_actions), dtype=np.int8)
        dc.legal_masks(idx, legal_out, nlegal, masks)
        return rows, masks

    traj = _Steps()
    alive = np.arange(count, dtype=np.int64)
    while len(alive):
        pending = alive
        while len(pending):            # every hand on to a learner's decision or its end
            dc.advance(prm, S, pending, kinds, moves, nmoves, legal_out, nlegal, status)
            randoms, chosen = [], []
            by_net: Dict[str, List[int]] = {}
            for h in pending.tolist():
                st = status[h]
                if st == dc.RANDOM:
                    randoms.append(h)
                    chosen.append(int(legal_out[h, int(rngs[h].integers(nlegal[h]))]))
                elif st == dc.NET:
                    by_net.setdefault(seat_members[h][int(S[h, cc.S_CUR])], []).append(h)
            for member, hs in by_net.items():
                rows, masks = observations(hs)
                logits, _ = nets[member].forward(rows)
                probs = masked_softmax(logits, masks)
                u = np.array([rngs[h].random() for h in hs])
                randoms += hs
                chosen += sample_actions(probs, masks, u).tolist()
            if randoms:
                play_all(randoms, chosen)
            pending = np.array(sorted(randoms), dtype=np.int64)
        waiting = [h for h in alive.tolist() if status[h] == dc.LEARNER]
        if waiting:
            rows, masks = observations(waiting)
            _learner_moves(player, args, rows, masks, [(h, int(S[h, cc.S_CUR])) for h in waiting], label_many, rngs,
                           teacher, traj, num_actions, play_all)
        alive = np.array(waiting, dtype=np.int64)
    finals = []
    out = np.zeros(4)
    for h in range(count):
        cc.returns_into(prm, S[h], out)
        finals.append(out[:n].tolist())
    return traj, finals


def ppo_update(net: PolicyNet, opt: torch.optim.Optimizer, batch: Batch, args: TrainArgs, update: int,
               guide: float = 0.0, replay: Optional[Replay] = None, fit: bool = True) -> dict:
    """``epochs`` passes of minibatch Adam on the clipped surrogate + value loss −
    entropy bonus, over the masked policy; with ``guide`` > 0 plus ``guide`` times the
    cross-entropy between the policy and the teacher's label over its sum (uniform over
    its best moves, or the visit distribution) on the labelled decisions, then
    ``guide_epochs`` passes of that loss alone over them — or, with ``replay``, as many
    minibatches drawn from the buffer (the update's labelled decisions added to it
    first), each buffer row once before any twice.  With ``replay`` and not ``fit`` (a
    round of ``--fit-every`` not yet over) the labels only join the buffer, and the
    result is ``{}``: nothing was fitted; the round's last update draws ``guide_epochs``
    times all the labels added since the last fit."""
    if not batch.decisions:
        return {"loss": 0.0, "entropy": 0.0, "value_loss": 0.0, "imitation": 0.0}
    # everything a minibatch needs, gathered once per minibatch (the same values the
    # losses always saw: indexing, the mask tests and the label weights are exact)
    device = next(net.parameters()).device
    T = torch.from_numpy(batch.teacher).float().to(device)
    T = T / T.sum(-1, keepdim=True).clamp(min=1.0)
    labelled = T.sum(-1) > 0
    X = torch.from_numpy(batch.obs).to(device)
    illegal = torch.from_numpy(batch.masks).to(device) == 0
    A = torch.from_numpy(batch.actions).to(device)
    old = torch.from_numpy(batch.logp).to(device)
    adv_all = torch.from_numpy(batch.advantages).to(device)
    ret = torch.from_numpy(batch.returns).to(device)
    rng = np.random.default_rng([args.seed, 3, update])
    params = [p for p in net.parameters()]
    totals = {"loss": 0.0, "entropy": 0.0, "value_loss": 0.0, "imitation": 0.0}
    parts = []                          # per step: the loss's terms, read out once at the end
    steps = 0
    for _ in range(args.epochs):
        order = torch.from_numpy(rng.permutation(batch.decisions)).to(device)
        for lo in range(0, batch.decisions, args.minibatch):
            idx = order[lo:lo + args.minibatch]
            off = illegal[idx]
            logits, value = net(X[idx])
            logp_all = torch.log_softmax(logits.masked_fill(off, float("-inf")), dim=-1)
            logp = logp_all.gather(1, A[idx, None])[:, 0]
            # illegal actions: p = 0 and log p = -inf; 0 * -inf would poison the gradient
            legal_logp = logp_all.masked_fill(off, 0.0)
            entropy = -(logp_all.exp() * legal_logp).sum(-1).mean()
            adv = adv_all[idx]
            if len(idx) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            ratio = (logp - old[idx]).exp()
            surrogate = torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv).mean()
            value_loss = ((value - ret[idx]) ** 2).mean()
            loss = -surrogate + args.vf_coef * value_loss - args.ent_coef * entropy
            imitation = None
            if guide > 0:
                on = labelled[idx]
                if bool(on.any()):
                    imitation = -(T[idx][on] * legal_logp[on]).sum(-1).mean()
                    loss = loss + guide * imitation
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 0.5)
            opt.step()
            parts.append((loss.detach(), entropy.detach(), value_loss.detach(),
                          imitation.detach() if imitation is not None else None))
            steps += 1
    for loss_, entropy_, value_, imitation_ in parts:       # summed in the order the steps ran
        totals["loss"] += loss_.item()
        totals["entropy"] += entropy_.item()
        totals["value_loss"] += value_.item()
        if imitation_ is not None:
            totals["imitation"] += imitation_.item()
    out = {k: v / max(steps, 1) for k, v in totals.items()}
    # labels are off-policy-safe (the solver's moves, not the learner's), so they are
    # worth more passes than PPO's own samples: guide_epochs of the imitation loss alone
    rows = torch.nonzero(labelled)[:, 0]
    if guide > 0 and len(rows) and args.guide_epochs:
        # only the labelled rows take part: gathered once, then each pass indexes them
        if replay is not None:
            picked = rows.cpu().numpy()
            replay.add(batch.obs[picked], batch.masks[picked], batch.teacher[picked], batch.returns[picked])
            if not fit:
                return {}
            Xl, legal_l, Tl, retl = replay.tensors()        # the labels already over their sums
            offl = ~legal_l
            draws = args.guide_epochs * (replay.written - replay.fitted)
            replay.fitted = replay.written
            order = np.concatenate([rng.permutation(len(Xl)) for _ in range(-(-draws // len(Xl)))])[:draws]
            passes = [torch.from_numpy(order).to(device)]
        else:
            Xl, offl, Tl, retl = X[rows], illegal[rows], T[rows], ret[rows]
            passes = (torch.from_numpy(rng.permutation(len(rows))).to(device) for _ in range(args.guide_epochs))
        seen, fits = torch.zeros(2, device=device), 0    # value loss and entropy: sums only
        for order in passes:
            for lo in range(0, len(order), args.minibatch):
                idx = order[lo:lo + args.minibatch]
                off = offl[idx]
                logits, value = net(Xl[idx])
                logp_all = torch.log_softmax(logits.masked_fill(off, float("-inf")), dim=-1)
                legal_logp = logp_all.masked_fill(off, 0.0)
                imitation = -(Tl[idx] * legal_logp).sum(-1).mean()
                value_loss = ((value - retl[idx]) ** 2).mean()
                opt.zero_grad()
                (guide * imitation + args.vf_coef * value_loss).backward()
                torch.nn.utils.clip_grad_norm_(params, 0.5)
                opt.step()
                if not steps:   # running sums: a kept 0-d tensor a minibatch costs tens of KB
                    with torch.no_grad():
                        seen += torch.stack((value_loss, -(legal_logp.exp() * legal_logp).sum(-1).mean()))
                    fits += 1
        out["imitation"] = imitation.item()
        if not steps:   # imitation alone (--epochs 0): its own value loss and entropy are the ones to show
            out["value_loss"], out["entropy"] = (total / fits for total in seen.tolist())
    return out


# ------------------------------------------------------------------ workers and the trainer
def new_teacher(args: TrainArgs) -> Teacher:
    return Teacher(args.game, args.options, args.guide, args.guide_samples, noise=args.guide_noise or None,
                   infer=args.guide_infer, floor=args.guide_floor, temperature=args.guide_temperature,
                   weigh=args.guide_weigh, phases=args.guide_phases)


_WORKER: Dict[str, object] = {}


def play_shard(shared, first_hand: int, count: int):
    """A worker's part of an update: ``(args, config, weights, league state, label)`` ->
    ``(steps, finals, results, first_hand)`` of hands ``first_hand ..``.  A worker keeps
    its net, league players and teacher between updates (the solver's table with it)."""
    args, config, weights, league_state, label = shared
    key = repr((config, args.game, args.options, args.guide, args.guide_samples, args.guide_noise, args.guide_infer,
                args.guide_floor, args.guide_temperature, args.guide_weigh, args.guide_phases))
    if _WORKER.get("key") != key:
        _WORKER.clear()
        _WORKER.update(key=key, net=PolicyNet(config), teacher=new_teacher(args) if args.guide else None)
    net = _WORKER["net"]
    net.load_state_dict(weights)
    league = League(args)
    league.load(league_state)
    player = NetPlayer(net, "learner", dtype=SELF_PLAY_DTYPE)
    steps, finals, results = play_part(player, league, args, first_hand, count, label,
                                       _WORKER["teacher"] if label else None)
    return steps, finals, results, first_hand


class PPOTrainer(skeleton.Trainer):
    """Masked PPO in a league, optionally guided (module docstring)."""

    name = "happy"
    Args = TrainArgs
    unit = "hand"
    batch_field = "batch_hands"

    def __init__(self, args: TrainArgs, device):
        super().__init__(args, device)
        self.net = PolicyNet(dict(net_spec(args.game, args.options), hidden=list(args.hidden),
                                  arch=args.arch, mirror=args.mirror)).to(device)
        self.config = dict(self.net.config)
        self.net.train()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.lr)
        self.league = League(args)
        self.replay = None
        if args.replay:
            game = get_game(args.game)
            self.replay = Replay(args.replay, Path(args.out) / "replay", game.observation_encoder(args.options).size,
                                 game.actions(args.options), device)

    @classmethod
    def default_against(cls, args) -> List[str]:
        if args.exploit:
            return [args.exploit]
        return list(EVAL_AGAINST.get(args.game, ["heaviest", "suits"]))

    @classmethod
    def default_out(cls, args) -> str:
        return f"results/train-{args.variant}" + ("-exploit" if args.exploit else "")

    def step(self, done: int, update: int, selfplay: skeleton.SelfPlay) -> dict:
        args = self.args
        guide = args.guide_weight(done)
        weights = {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()}
        parts = selfplay.map(play_shard, (args, self.config, weights, self.league.state(), guide > 0),
                             done, args.batch_hands)
        steps, finals, results = _Steps.joined(parts, done)
        game = get_game(args.game)
        batch = steps.batch(finals, args.gae_lambda, args.batch_hands, game.observation_encoder(args.options).size,
                            game.actions(args.options), results, net=self.net)
        fit = (update + 1) % args.fit_every == 0 or done + args.batch_hands >= args.hands   # a round's end, or the run's
        stats = ppo_update(self.net, self.opt, batch, args, update, guide, self.replay, fit)
        self.league.record(batch.results)
        if not args.exploit and (update + 1) % args.snapshot_every == 0:
            self.league.add_snapshot(f"snapshot-{update + 1}", self.net)
        out = {k: stats[k] for k in ("entropy", "value_loss", "imitation") if k in stats}   # none between fits
        return {**out, "decisions": batch.decisions / max(batch.hands, 1)}

    def shown(self, stats):
        out = {name: fmt.format(stats[key]) if key in stats else "-"      # "-": no fit this update
               for name, key, fmt in (("entropy", "entropy", "{:.2f}"), ("vloss", "value_loss", "{:.3f}"),
                                      ("imitation", "imitation", "{:.3f}"))}
        return {**out, "dec": f"{stats['decisions']:.1f}"}

    def checkpoint(self, meta: dict, **extra) -> dict:
        if self.replay is not None:
            extra["replay"] = self.replay.state()
        return skeleton.on_cpu(net_dict(self.net, meta=meta, optimizer=self.opt.state_dict(),
                                        league=self.league.state(), **extra))

    def read(self, path: Path) -> dict:
        return read_net(path)

    def load(self, data: dict, path: Path) -> None:
        for key in ("optimizer", "league"):
            if key not in data:
                raise PipslabError(f"{path}: not a training checkpoint (no {key!r}); a shipped net cannot be resumed")
        self.net.load_state_dict(net_from(data, path).state_dict())
        self.net.train()
        try:
            self.league.load(data["league"])
            if self.replay is not None:
                self.replay.load(data["replay"], path)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise PipslabError(f"{path}: damaged training checkpoint ({type(exc).__name__})") from None
        self.opt = skeleton.resumed_optimizer(self.net, self.args.lr, data, path)

    def begin(self) -> None:
        if self.args.replay_from:
            source = label_source(self.args.replay_from, self.args.game, self.args.options)
            taken = self.replay.take(source)
            if self.args.progress:
                import sys
                sys.stderr.write(f"took {taken:,} labelled decisions from {source.folder}\n")

    def init_from(self, path: str) -> None:
        from pipslab.agents.netfiles import net_path
        start = net_from(read_net(net_path(path)), path)
        if start.config == self.config:
            self.net.load_state_dict(start.state_dict())
            return
        try:                                 # a narrower net: widened, its new units from the run's seed
            grow(start, self.net)
        except PipslabError as exc:
            raise PipslabError(f"--init {path}: {exc}") from None

    def net_file(self, meta: dict) -> dict:
        return skeleton.on_cpu(net_dict(self.net, meta=meta))

    @classmethod
    def agent_spec(cls, path) -> str:
        return f"net:net={path}"


def train(args: TrainArgs) -> dict:
    """Run (or resume) a training (:func:`pipslab.experiments.trainer.train`)."""
    return skeleton.train(PPOTrainer, args)


TRAINER = PPOTrainer
