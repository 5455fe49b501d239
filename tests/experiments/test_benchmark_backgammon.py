"""The backgammon benchmark set (experiments/benchmark_backgammon.py): the best play loses
nothing, a wasted checker loses, the TDNet fast path chooses as the ``td`` agent does, the
file round-trips without pickles, and every bad input is one line (exit 2)."""
from __future__ import annotations

import subprocess
import sys
import zipfile

import numpy as np
import pytest

from pipslab.envs.backgammon import Position, legal_plays
from pipslab.envs.errors import PipslabError
from pipslab.experiments import benchmark_backgammon as B

# me: one checker on 6, one on 5 (13 off); the opponent: four on his 1-point (11 off).  6-5:
# 6/off 5/off wins now; 6/1 5/off leaves a checker, and loses when he rolls a double (1/6).
WASTE = Position.from_points({6: 1, 5: 1}, {24: 4})


@pytest.fixture(scope="module")
def shipped():
    return B.load()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "small.npz"
    return B.make(out, decisions=12, seed=1, reference="td", drivers=("pubeval", "random"))


def test_shipped_file_is_what_its_metadata_says(shipped):
    assert B.SHIPPED.stat().st_size < 400_000
    assert shipped.decisions >= 1000 and shipped.meta["decisions"] == shipped.decisions
    assert shipped.reference.startswith("GNU BG 2-ply") and "every play at full depth" in shipped.reference
    assert "make --decisions" in shipped.meta["command"] and shipped.meta["command"] in " ".join(B.__doc__.replace("\\", " ").split())
    assert (shipped.counts >= 2).all() and (shipped.plies == 2).all()
    phases = np.bincount(shipped.phases(), minlength=3)
    assert phases[0] > phases[1] > 0 and phases[2] > 0         # contact, race, bear-off


def test_best_play_loses_nothing(shipped, small):
    for bench in (shipped, small):
        loss = bench.loss
        assert (loss >= 0).all()
        assert (np.minimum.reduceat(loss, bench.offsets[:-1]) == 0).all()
        best = np.array([lo + int(np.argmax(bench.equity[lo:hi]))
                         for lo, hi in zip(bench.offsets[:-1], bench.offsets[1:])])
        result = B.summarize(bench.loss[best], bench)
        assert result["error_rate"] == 0 and result["blunders"] == 0
        worst = np.array([lo + int(np.argmin(bench.equity[lo:hi]))
                          for lo, hi in zip(bench.offsets[:-1], bench.offsets[1:])])
        assert B.summarize(bench.loss[worst], bench)["error_rate_low"] > 50


def test_wasted_checker_in_the_bear_off_loses():
    bench = B.build([(WASTE, (6, 5))], "td")
    names = [p.notation for p in legal_plays(WASTE, (6, 5))]
    loss = dict(zip(names, bench.loss))
    assert loss["6/off 5/off"] == 0 and loss["6/1 5/off"] > 0.05
    assert B.summarize([loss["6/1 5/off"]], bench)["blunders"] == 1


def test_wasted_checker_by_gnubg_is_a_third_of_a_point():
    pytest.importorskip("gnubg_nn")
    bench = B.build([(WASTE, (5, 6))], "gnubg:plies=0")
    assert bench.loss[0] == 0 and bench.loss[1] == pytest.approx(1 / 3, abs=0.01)
    assert bench.reference.startswith("GNU BG 0-ply")


def test_fast_path_chooses_as_the_td_agent(shipped):
    from pipslab.agents.td import load_net
    part = shipped.select(range(0, shipped.decisions, 3))
    fast, slow = B.choices(load_net(), part), B.choices("td", part)
    assert (fast == slow).all()
    assert B.error_rate(load_net(), part)["error_rate"] == B.error_rate("td", part)["error_rate"]
    assert B.error_rate("random", part)["error_rate"] > B.error_rate(load_net(), part)["error_rate_high"]


def test_file_round_trips(small, tmp_path):
    path = B.save(small, tmp_path / "copy.npz")
    again = B.load(path)
    for name, array in small.arrays().items():
        assert (again.arrays()[name] == array).all(), name
    assert again.meta == small.meta and again.meta["reference"] == "td, every play"
    with np.load(path, allow_pickle=False) as z:
        assert z["plays"].dtype == np.dtype("S14")
    ids = [i.decode() for i in again.plays[:200]] + [i.decode() for i in again.positions]
    assert (B.decode_ids(np.array(ids, dtype="S14")) == [Position.from_id(i) for i in ids]).all()
    again2 = B.make(tmp_path / "same.npz", decisions=12, seed=1, reference="td", drivers=("pubeval", "random"))
    assert (again2.plays == small.plays).all() and (again2.equity == small.equity).all()


def _one_line(fn):
    with pytest.raises(PipslabError) as info:
        fn()
    assert "\n" not in str(info.value)
    return str(info.value)


def test_damaged_files_are_one_line(small, tmp_path):
    path = tmp_path / "b.npz"
    B.save(small, path)
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    assert "damaged" in _one_line(lambda: B.load(tmp_path / "cut.npz"))
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    assert "damaged" in _one_line(lambda: B.load(tmp_path / "junk.npz"))
    assert "no benchmark file" in _one_line(lambda: B.load(tmp_path / "missing.npz"))
    arrays = small.arrays()
    for name, change in [("meta", lambda a: np.array('{"format": "other"}')),
                         ("offsets", lambda a: a[::-1].copy()),
                         ("plays", lambda a: np.where(np.arange(len(a)) == 3, b"!!!!!!!!!!!!!!", a)),
                         ("positions", lambda a: np.where(np.arange(len(a)) == 0, b"//////////////", a))]:
        bad = dict(arrays, **{name: change(arrays[name])})
        with zipfile.ZipFile(tmp_path / f"{name}.npz", "w") as z:
            for key, value in bad.items():
                with z.open(key + ".npy", "w") as f:
                    np.lib.format.write_array(f, value, allow_pickle=False)
        assert "damaged" in _one_line(lambda: B.load(tmp_path / f"{name}.npz")), name
    no_meta = {k: v for k, v in arrays.items() if k != "meta"}
    np.savez(tmp_path / "nometa.npz", **no_meta)
    assert "no meta" in _one_line(lambda: B.load(tmp_path / "nometa.npz"))


def test_cli_rates_and_refuses_in_one_line(small, tmp_path, capsys, monkeypatch):
    assert B.main(["rate", "random", "pubeval", "td", "--benchmark", small.source]) == 0
    out = capsys.readouterr().out
    assert "td (net)" in out and "pubeval" in out and "12 decisions" in out
    assert B.main(["rate", "nosuchagent", "--benchmark", small.source]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuchagent" in err
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)        # as if gnubg-nn were not installed
    assert B.main(["make", "--decisions", "3", "--out", str(tmp_path / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gnubg-nn" in err and not (tmp_path / "x.npz").exists()
    (tmp_path / "bad.npz").write_bytes(b"junk")
    r = subprocess.run([sys.executable, "-m", "pipslab.experiments.benchmark_backgammon", "rate", "td",
                        "--benchmark", str(tmp_path / "bad.npz")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
