"""Model cards, generated: the end of a recipe run (:func:`finish_recipe_run`: the net, the
joined curve, the evaluation through the tournament harness, ``card.json``) and the card's
text from that data alone (:func:`card_text`), so a shipped card (``agents/nets/NAME.md``)
is always the text of its ``NAME.json`` — a test regenerates every one and compares.
No card names a folder of any machine: a run folder is written ``DIR``.
"""
from __future__ import annotations

import csv
import json
import platform
import re
from pathlib import Path
from typing import List, Optional

from .files import atomic_path, atomic_write_json, atomic_write_text

CARD_VERSION = 1


def _rel(text, out: Path) -> str:
    """``text`` with the run folder written ``DIR`` — only where it stands as a whole path
    (after a space, ``=`` or the start, before ``/``, a space or the end), so a folder
    named ``rec`` leaves ``--recipe`` alone."""
    if text is None:
        return ""
    text = str(text)
    for folder in (str(out.resolve()), str(out)):
        text = re.sub(r"(?<![^\s=])" + re.escape(folder) + r"(?=[/\s]|$)", "DIR", text)
    return text


def _net_summary(net_file: Path, game: str) -> dict:
    import torch
    data = torch.load(net_file, weights_only=True, map_location="cpu")
    cfg = dict(data["config"])
    params = sum(int(v.numel()) for v in data["model"].values())
    if game == "backgammon":
        from pipslab.agents.td import TDNet
        inputs = TDNet.inputs(cfg.get("features", "plus"))
        outputs = 5
    else:
        inputs, outputs = int(cfg["inputs"]), int(cfg["actions"]) + 1
    return {"inputs": inputs, "hidden": list(cfg.get("hidden", [])), "outputs": outputs, "parameters": params,
            "config": {k: v for k, v in cfg.items() if isinstance(v, (str, int, float, bool, list))}}


def stage_done(sdir: Path) -> int:
    """What a finished stage's run trained (games or hands), from its ``run.json``."""
    return int(json.loads((sdir / "run.json").read_text()).get("result", {}).get("done", 0))


def join_curves(stage_dirs: List[Path], unit: str, out: Path, title: str) -> List[dict]:
    """Every stage's ``curve.csv`` as one curve, x counted across the stages."""
    from .trainer import CURVE_FIELDS, write_curve
    rows, offset = [], 0
    x = unit + "s"
    for sdir in stage_dirs:
        path = sdir / "curve.csv"
        if path.is_file():
            with path.open() as f:
                for r in csv.DictReader(f):
                    row = {k: (float(v) if k not in ("opponent",) else v) for k, v in r.items()}
                    row[x] = int(float(r[x])) + offset
                    row["eval_games"] = int(float(r["eval_games"]))
                    row["stage"] = sdir.name
                    rows.append(row)
        offset += stage_done(sdir)
    write_curve(out, rows, [x, "stage", *CURVE_FIELDS], x, f"training {unit}s (all stages)", title)
    return rows


ERROR_FIELDS = ("stage", "error_rate", "error_rate_low", "error_rate_high", "decisions")


def error_curve(recipe, stage_dirs: List[Path], out: Path) -> Optional[dict]:
    """The error rate (the trainer's benchmark) of the net each evaluation kept, and of
    the shipped net the recipe starts from at 0, against the budget across the stages:
    ``out/error-curve.csv`` and ``error-curve.png``; returns ``{"reference", "points"}``,
    or None when the trainer has no benchmark."""
    from pipslab.agents.netfiles import net_path
    trainer = recipe.trainer
    x = recipe.unit + "s"
    rows, offset = [], 0
    reference = None

    def add(at: int, stage: str, path: Path) -> bool:
        nonlocal reference
        r = trainer.error_rate(path)
        if r is None:
            return False
        reference = r.get("reference")
        rows.append({x: at, "stage": stage, **{k: round(float(r[k]), 3) for k in ERROR_FIELDS[1:4]},
                     "decisions": int(r["decisions"])})
        return True

    if recipe.start and not add(0, f"start ({recipe.start})", net_path(recipe.start)):
        return None
    for sdir in stage_dirs:
        for snap in sorted((sdir / "evals").glob("*-net.pt")):
            if not add(int(snap.name.split("-")[0]) + offset, sdir.name, snap):
                return None
        offset += stage_done(sdir)
    if not rows:
        return None
    import io
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=[x, *ERROR_FIELDS], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(out / "error-curve.csv", buf.getvalue())
    from .plots import new_figure
    fig, ax = new_figure((7, 4))
    xs = [r[x] for r in rows]
    ax.plot(xs, [r["error_rate"] for r in rows], marker="o", color="C3", label="error rate")
    ax.fill_between(xs, [r["error_rate_low"] for r in rows], [r["error_rate_high"] for r in rows], alpha=0.2,
                    color="C3")
    ax.set_xlabel(f"training {x} (all stages)")
    ax.set_ylabel("error rate (mean loss x 1000, 95%)")
    ax.set_title(f"{recipe.name}: error rate on the benchmark ({reference})", fontsize=9)
    fig.tight_layout()
    with atomic_path(out / "error-curve.png") as tmp:
        fig.savefig(tmp, format="png", dpi=100)
    return {"reference": reference, "points": len(rows), "start": bool(recipe.start)}


def evaluate(recipe, out: Path, net_file: Path, games: int, progress: bool) -> List[dict]:
    """The recipe's evaluation: the net against each agent on duplicate deals (or dice)
    through the harness (:func:`~pipslab.experiments.trainer.play_off`), in
    ``out/evaluation/``; each row's command names the shipped net, not the file."""
    from .trainer import folder_name, play_off
    me = recipe.trainer.agent_spec(net_file)
    shipped = f"{recipe.trainer.agent_spec('NAME').split('=')[0]}={recipe.name}"
    rows = []
    for opp in recipe.against:
        folder = out / "evaluation" / folder_name(opp)
        r = play_off(recipe.game, recipe.options, me, opp, games, recipe.eval_seed, folder, progress)
        cmd = r["command"].replace(me, shipped)
        cmd = cmd.replace(f" --out {folder}", "").replace(f" --out {str(folder.resolve())}", "")
        rows.append({**r, "command": _rel(cmd, out)})
    return rows


def finish_recipe_run(recipe, run, scale: float, stages: List[dict], games: int) -> dict:
    """After the last stage: ``net.pt``, the joined curve, the evaluation, ``card.json``
    and ``model-card.md`` in the run folder; returns the card's data."""
    import torch

    from .runner import provenance
    out = run.out
    last = stages[-1]["folder"]
    net = torch.load(last / "net.pt", weights_only=True, map_location="cpu")
    net["meta"] = {**dict(net.get("meta", {})), "recipe": recipe.name, "scale": scale,
                   "command": _rel(run.command, out)}
    with atomic_path(out / "net.pt", suffix=".pt") as tmp:
        torch.save(net, tmp)
    unit = recipe.unit
    join_curves([s["folder"] for s in stages], unit, out, f"{recipe.name}: the net against fixed opponents")
    errors = error_curve(recipe, [s["folder"] for s in stages], out)
    rows = evaluate(recipe, out, out / "net.pt", games, run.progress)
    info = provenance()
    import torch as _t
    data = {
        "card_version": CARD_VERSION, "name": recipe.name, "game": recipe.game, "options": recipe.options,
        "description": recipe.description, "unit": unit,
        "recipe_command": _rel(run.command, out), "scale": scale, "start": recipe.start or None,
        "full_scale": scale == 1, "history": None,
        "stages": [{"name": st.name, "command": _rel(s["command"], out), "done": s["result"]["done"],
                    "updates": s["result"]["updates"], "wall_s": s["result"]["wall_s"]}
                   for st, s in zip(recipe.stages, stages)],
        "machine": stages[-1].get("machine"), "device": stages[-1].get("device"),
        # the commit the stages trained at (the last stage's), the evaluation's below
        "pipslab_version": info["pipslab_version"], "git_commit": stages[-1].get("git_commit"),
        "git_dirty": stages[-1].get("git_dirty"),
        "python": platform.python_version(), "torch": _t.__version__,
        "net": _net_summary(out / "net.pt", recipe.game),
        "evaluation": {"games": games, "seed": recipe.eval_seed, "rows": rows, "git_commit": info["git_commit"]},
    }
    if errors:
        data["error_curve"] = errors
    atomic_write_json(out / "card.json", data)
    atomic_write_text(out / "model-card.md", card_text(data, "curve.png", "curve.csv"))
    run.update(card="model-card.md")
    return data


def _sides(game: str, options: dict) -> int:
    from pipslab.envs.game import get_game
    return len(set(get_game(game).teams(options)))


def card_text(data: dict, curve_png: str, curve_csv: str) -> str:
    """The model card of ``data`` (``card.json``): what the net is, how it was trained —
    the recipe, each stage's exact command, budget and wall time, the machine and commit —
    whether it is the recipe's full-scale output, and the measured table."""
    name, unit = data["name"], data["unit"]
    net = data["net"]
    L = [f"# `{name}` — a shipped net of pipslab ({data['game']}"
         + (" " + " ".join(f"{k}={v}" for k, v in data["options"].items()) if data["options"] else "") + ")",
         "",
         "_Generated from its training run's data (`" + name + ".json`) by `pipslab.experiments.model_card`; "
         "do not edit by hand._", ""]
    if data.get("description"):
        L += [data["description"], ""]
    L += ["## What it is", "",
          f"- {net['inputs']} inputs, hidden layers {', '.join(map(str, net['hidden'])) or 'none'}, "
          f"{net['outputs']} outputs; {net['parameters']:,} parameters, float32, read with "
          "`torch.load(weights_only=True)`."]
    mirror = net.get("config", {}).get("mirror")
    if mirror:
        L += ["- A mirror net: it reads each position with the line turned to one canonical order "
              "(`--mirror`, docs/training.md)."]
    L += ["", "## How it was trained", ""]
    if data.get("start"):
        same = "the same function at the start" + (", on each position's canonical form" if mirror else "")
        L += [f"Its first stage starts from the shipped net `{data['start']}` (`{data['start']}.md`, retrained by "
              f"`pipslab train --recipe {data['start']} --out DIR`), grown to this net's inputs and layers where "
              f"they differ ({same}).", ""]
    if data.get("full_scale"):
        L += [f"It is exactly the output of its recipe at full scale: `{data['recipe_command']}` "
              f"(`experiments/recipes/{name}.toml`), stages chained by the trainer.", ""]
    elif data.get("history"):
        L += [f"Its recipe is `experiments/recipes/{name}.toml` (`pipslab train --recipe {name} --out DIR`), but "
              "**this net is not that recipe's output**: " + data["history"], ""]
    else:
        L += [f"**A scaled run** (`--scale {data['scale']:g}`) of `experiments/recipes/{name}.toml`, not the "
              f"shipped plan: `{data['recipe_command']}`.", ""]
    total_done = sum(s["done"] for s in data["stages"])
    total_wall = sum(s["wall_s"] or 0 for s in data["stages"])
    L += [f"{total_done:,} {unit}s in {len(data['stages'])} stage{'s' if len(data['stages']) != 1 else ''}, "
          f"{total_wall / 60:.0f} minutes of training wall time (evaluations excluded)"
          + (f", on {data['machine']}" if data.get("machine") else "") + ":", ""]
    L += [f"| stage | {unit}s | updates | wall time | command |", "|---|---|---|---|---|"]
    for i, s in enumerate(data["stages"], 1):
        wall = f"{s['wall_s'] / 60:.1f} min" if s.get("wall_s") is not None else "—"
        upd = f"{s['updates']:,}" if s.get("updates") is not None else "—"
        L.append(f"| {i}. {s['name']} | {s['done']:,} | {upd} | {wall} | `{s['command']}` |")
    if data.get("git_commit"):
        L += ["", f"pipslab {data.get('pipslab_version')}, commit `{data['git_commit'][:12]}`"
              + (" (with uncommitted changes)" if data.get("git_dirty") else "")
              + f", Python {data.get('python')}, torch {data.get('torch')}.", ""]
    else:
        L += ["", "The training commit was not recorded (a net trained before recipes).", ""]
    ev = data["evaluation"]
    at = f", code at commit `{ev['git_commit'][:12]}`" if ev.get("git_commit") else ""
    sides = _sides(data["game"], data["options"])
    L += [f"## Measured ({ev['games']:,} duplicate games per row, seed {ev['seed']}{at})", ""]
    if sides > 2:
        L += [f"{sides} sides at the table, seated from the two agents in turn on duplicate deals (the games "
              f"column counts the net's seats): an even share of the wins is {1 / sides:.0%}.", ""]
    L += [
          "| against | games | wins–draws–losses | win rate | Wilson 95% | points/game |", "|---|---|---|---|---|---|"]
    for r in ev["rows"]:
        L.append(f"| `{r['opponent']}` | {r['games']:,} | {r['wins']}–{r['draws']}–{r['losses']} | "
                 f"**{r['win_rate']:.1%}** | [{r['win_low']:.1%}, {r['win_high']:.1%}] | {r['points_per_game']:+.3f} |")
    L += ["", "Each row:", ""] + [f"- `{r['command']}`" for r in ev["rows"]]
    L += ["", "## Learning curve", "", f"![curve]({curve_png})", "",
          f"`{curve_csv}`: the win rate with its Wilson interval at every evaluation of every stage "
          f"({unit}s counted across the stages).", ""]
    if data.get("error_curve"):
        err_png, err_csv = (c.replace("curve.", "error-curve.") for c in (curve_png, curve_csv))
        e = data["error_curve"]
        L += [f"![error rate]({err_png})", "",
              f"`{err_csv}`: the error rate (mean equity lost per decision x 1000, 95% interval) of the net each "
              f"evaluation kept{', and of the net the recipe starts from at 0' if e.get('start') else ''}, on "
              f"the benchmark's fixed decisions valued by {e['reference']} ({e['points']} points).", ""]
    return "\n".join(L)


# ------------------------------------------------------------------ shipped cards
def measure(recipe, nets_dir: Path, workdir: Path, progress: bool = False) -> dict:
    """Run the evaluation ``recipe`` names for the shipped net ``nets_dir/NAME.pt``
    through the harness (in ``workdir``), store the rows in ``NAME.json`` and write the card
    again.  For a net whose recipe run is not at hand (only its ``NAME.json`` is) and after
    any change that may move the figures."""
    from .runner import provenance
    name = recipe.name
    path = nets_dir / f"{name}.json"
    data = json.loads(path.read_text())
    data["evaluation"] = {"games": recipe.eval_games, "seed": recipe.eval_seed,
                          "rows": evaluate(recipe, workdir, nets_dir / f"{name}.pt", recipe.eval_games, progress),
                          "git_commit": provenance()["git_commit"]}
    data["net"] = _net_summary(nets_dir / f"{name}.pt", recipe.game)
    atomic_write_json(path, data)
    render(name, nets_dir)
    return data


def render(name: str, nets_dir: Path) -> None:
    """``NAME.md`` from ``NAME.json`` in ``nets_dir``; one line when there is none."""
    from pipslab.envs.errors import PipslabError
    try:
        data = json.loads((nets_dir / f"{name}.json").read_text())
    except (OSError, ValueError) as exc:
        raise PipslabError(f"cannot read the card data of {name!r}: {getattr(exc, 'strerror', None) or exc}") from None
    atomic_write_text(nets_dir / f"{name}.md", card_text(data, f"{name}-curve.png", f"{name}-curve.csv"))
