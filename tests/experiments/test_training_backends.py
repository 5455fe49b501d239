"""Self-play workers: the weights after N updates are the same with 1 or 2 workers and on
the process or the Ray backend (a local two-node Ray cluster), for both trainers; and
TensorBoard scalars for every trainer."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from pipslab.experiments import train_backgammon as tb
from pipslab.experiments import train_dominoes as td
from pipslab.experiments.trainer import shards

DOMINO = dict(game="troshin", options={"players": 4, "pairs": True}, hands=192, seed=3, hidden=[16],
              batch_hands=64, minibatch=128, epochs=2, snapshot_every=1, checkpoint_every=1, eval_games=0,
              progress=False)
BACKGAMMON = dict(games=64, seed=6, hidden=[8], batch_games=32, eval_games=0, progress=False)


def _same(a, b) -> bool:
    x = torch.load(a, weights_only=True)["model"]
    y = torch.load(b, weights_only=True)["model"]
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def test_shards_cover_the_batch_in_order():
    assert shards(10, 7, 3) == [(10, 2), (12, 2), (14, 3)]
    assert shards(0, 2, 4) == [(0, 1), (1, 1)]
    assert sum(c for _, c in shards(5, 513, 16)) == 513


@pytest.mark.slow
def test_one_and_two_worker_processes_give_the_same_domino_weights(tmp_path):
    td.train(td.TrainArgs(out=str(tmp_path / "one"), **DOMINO))
    td.train(td.TrainArgs(out=str(tmp_path / "two"), workers=2, **DOMINO))
    assert _same(tmp_path / "one" / "net.pt", tmp_path / "two" / "net.pt")


@pytest.mark.slow
def test_one_and_two_worker_processes_give_the_same_guided_weights(tmp_path):
    common = dict(game="happy", options={"mode": "block"}, hands=128, seed=4, hidden=[16], batch_hands=64,
                  epochs=0, guide="pimc", guide_samples=2, eval_games=0, progress=False)
    td.train(td.TrainArgs(out=str(tmp_path / "one"), **common))
    td.train(td.TrainArgs(out=str(tmp_path / "two"), workers=2, **common))
    assert _same(tmp_path / "one" / "net.pt", tmp_path / "two" / "net.pt")


@pytest.mark.slow
def test_the_whole_hand_round_gives_the_same_weights_on_one_or_two_workers_and_again(tmp_path):
    """The shipped draw round's flags (pimc weighed by the learner, the replay fitted in
    one round at the run's end, greedy play with exploration, started from a net):
    workers and a rerun change nothing, so the recipe's stage reproduces its net."""
    start = dict(game="happy", options={"mode": "draw"}, hands=64, seed=2, hidden=[16], batch_hands=32,
                 eval_games=0, progress=False)
    td.train(td.TrainArgs(out=str(tmp_path / "start"), **start))
    round_ = dict(game="happy", options={"mode": "draw"}, hands=96, seed=5, hidden=[16], batch_hands=32,
                  minibatch=64, epochs=0, self_play=1.0, guide="pimc", guide_samples=2, guide_infer="learner",
                  guide_floor=0.02, replay=5000, fit_every=48, play="greedy", explore=0.1,
                  init=str(tmp_path / "start" / "net.pt"), eval_games=0, progress=False)
    td.train(td.TrainArgs(out=str(tmp_path / "one"), **round_))
    td.train(td.TrainArgs(out=str(tmp_path / "two"), workers=2, **round_))
    td.train(td.TrainArgs(out=str(tmp_path / "again"), workers=2, **round_))
    assert not _same(tmp_path / "start" / "net.pt", tmp_path / "one" / "net.pt")
    assert _same(tmp_path / "one" / "net.pt", tmp_path / "two" / "net.pt")
    assert _same(tmp_path / "two" / "net.pt", tmp_path / "again" / "net.pt")


@pytest.mark.slow
@pytest.mark.xdist_group("ray")   # one local Ray at a time under xdist
def test_ray_on_a_two_node_cluster_gives_the_process_backends_weights(tmp_path):
    """Both trainers on a local two-node cluster (``ray.cluster_utils.Cluster``), in a
    process of its own, against the process backend's nets."""
    import ray  # noqa: F401  (in the dev extra: a missing ray fails this test, it does not skip)
    script = textwrap.dedent(f"""
        import ray
        from ray.cluster_utils import Cluster
        cluster = Cluster(initialize_head=True, head_node_args={{"num_cpus": 1}})
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        from pipslab.experiments import train_backgammon as tb, train_dominoes as td
        td.train(td.TrainArgs(out={str(tmp_path / 'd-ray')!r}, backend="ray", workers=2, **{DOMINO!r}))
        tb.train(tb.TrainArgs(out={str(tmp_path / 'b-ray')!r}, backend="ray", workers=2, **{BACKGAMMON!r}))
        ray.shutdown()
        cluster.shutdown()
    """)
    cluster = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:        # the process backend's runs while the cluster starts
        td.train(td.TrainArgs(out=str(tmp_path / "d-process"), **DOMINO))
        tb.train(tb.TrainArgs(out=str(tmp_path / "b-process"), **BACKGAMMON))
        err = cluster.communicate(timeout=600)[1]
    finally:
        if cluster.poll() is None:
            cluster.kill()
    assert cluster.returncode == 0, err[-3000:]
    assert _same(tmp_path / "d-process" / "net.pt", tmp_path / "d-ray" / "net.pt")
    assert _same(tmp_path / "b-process" / "net.pt", tmp_path / "b-ray" / "net.pt")


@pytest.mark.slow
def test_tensorboard_scalars_for_every_trainer(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    td.train(td.TrainArgs(out=str(tmp_path / "d"), tensorboard=True, **{**DOMINO, "hands": 64}))
    tb.train(tb.TrainArgs(out=str(tmp_path / "b"), tensorboard=True, **{**BACKGAMMON, "games": 32}))
    for run, tag in (("d", "train/entropy"), ("b", "train/loss")):
        acc = EventAccumulator(str(tmp_path / run / "tensorboard"))
        acc.Reload()
        assert tag in acc.Tags()["scalars"], acc.Tags()
