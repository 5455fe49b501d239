"""Recipes: the complete multi-stage plan of a shipped net, run by one command.

    pipslab train --recipe happy-block --out DIR [--scale F] [--resume]
    pipslab train --recipes

A recipe is ``experiments/recipes/NAME.toml`` (docs/training.md has the format): the game
and its options, the stages in order — each a trainer's settings and its budget (``games``
or ``hands``), laid over the ``[defaults]`` every stage starts from — and the evaluation
its model card reports.  The run folder holds
``stages/K-NAME/`` (each stage an ordinary training run of the skeleton, so ``--resume``
continues whichever stage was running), then ``net.pt`` (the last stage's net), the
curve of every stage joined (``curve.csv``, ``curve.png``, x counted across stages), the
evaluation through the tournament harness (``evaluation/``), and the generated model card
(``model-card.md`` from ``card.json``; :mod:`pipslab.experiments.model_card`).  A stage
after the first starts from the previous stage's ``net.pt`` inside the run folder, never
from a file outside it; the first starts from fresh weights, or from a shipped net the
recipe names (``start = "NAME"``, itself retrained by its own recipe).  Likewise a stage's
``replay_from = "STAGE"`` takes the labels of an earlier stage of the same run, from its
folder (the trainer's ``--replay-from``).  ``--scale F``
multiplies every budget — stages, schedules, evaluation games — so a recipe can be
smoke-tested in seconds.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
import sys
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from pipslab.envs.errors import PipslabError, excerpt

from .checks import kind_of

RECIPE_DIR = Path(__file__).resolve().parent / "recipes"
# stage settings the recipe runner sets itself
RUNNER_FIELDS = ("out", "resume", "init", "config", "progress", "game", "options", "imports", "workers", "backend",
                 "device", "threads", "tensorboard")
# settings scaled with the budget (schedules counted in games or hands)
SCALED = ("eval_every", "guide_hands", "lr_halflife")
MIN_EVAL_GAMES = 20


@dataclass
class Stage:
    name: str
    budget: int
    settings: Dict[str, Any]


@dataclass
class Recipe:
    name: str
    description: str
    game: str
    options: Dict[str, Any]
    stages: List[Stage]
    against: List[str]
    eval_games: int
    eval_seed: int
    seed: int
    text: str
    start: str = ""       # a shipped net the first stage starts from ("" : fresh weights)

    @property
    def trainer(self):
        from .trainers import trainer_for
        return trainer_for(self.game)

    @property
    def unit(self) -> str:
        return self.trainer.unit

    def sha(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def recipe_names() -> List[str]:
    return sorted(p.stem for p in RECIPE_DIR.glob("*.toml"))


def load_recipe(name: str) -> Recipe:
    """A recipe by name (``experiments/recipes/NAME.toml``) or path; every field checked:
    one line naming the recipe, the field and what is wrong."""
    path = Path(name)
    if not (path.suffix == ".toml" and path.is_file()):
        path = RECIPE_DIR / f"{name}.toml"
        if not path.is_file():
            raise PipslabError(f"unknown recipe {excerpt(name)}; recipes: {', '.join(recipe_names())}")
    import tomllib
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise PipslabError(f"cannot read recipe {str(path)!r}: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PipslabError(f"recipe {path.name}: not valid TOML: {exc}") from None
    where = f"recipe {path.stem}"
    return parse_recipe(path.stem, data, text, where)


def _need(data: dict, key: str, kind, where: str, default=None):
    if key not in data:
        if default is not None:
            return default
        raise PipslabError(f"{where}: no {key!r}")
    value = data[key]
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise PipslabError(f"{where}: {key} must be {getattr(kind, '__name__', kind)}, got {kind_of(value)} "
                           f"{excerpt(value)}")
    return value


def parse_recipe(name: str, data: dict, text: str, where: str) -> Recipe:
    from pipslab.envs.game import get_game

    from .trainers import trainer_for
    known = {"description", "game", "options", "seed", "start", "defaults", "stages", "evaluation"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise PipslabError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
    game = _need(data, "game", str, where)
    try:
        g = get_game(game)
        trainer = trainer_for(game)
        given = _need(data, "options", dict, where, default={})
        resolved = g.resolve(given)
        options = g.options_for({k: resolved[k] for k in given})
    except PipslabError as exc:
        raise PipslabError(f"{where}: {exc}") from None
    seed = _need(data, "seed", int, where, default=0)
    start = _need(data, "start", str, where) if "start" in data else ""
    if start:
        from pipslab.agents.netfiles import shipped_nets
        if start not in shipped_nets():
            raise PipslabError(f"{where}: start must name a shipped net (its own recipe retrains it), got "
                               f"{excerpt(start)}; shipped: {', '.join(shipped_nets())}")
    stages_data = _need(data, "stages", list, where)
    if not stages_data:
        raise PipslabError(f"{where}: no stages")
    budget_key = trainer.unit + "s"
    fields = {f.name: f for f in dataclasses.fields(trainer.Args)}
    hints = typing.get_type_hints(trainer.Args)

    def settings_of(table: dict, at: str) -> dict:
        """The trainer settings of a stage's table (or of ``[defaults]``), the budget among
        them, each key known and of its field's type: one line naming where, the key and
        what is wrong."""
        settings = {}
        for key, value in table.items():
            if key in ("name", budget_key):
                continue
            if key not in fields or key in RUNNER_FIELDS or not fields[key].metadata.get("cli", True):
                raise PipslabError(f"{at}: unknown key {key!r} for the {game} trainer")
            outer = typing.get_origin(hints[key]) or hints[key]
            if outer is typing.Union:
                outer = next(a for a in typing.get_args(hints[key]) if a is not type(None))
                outer = typing.get_origin(outer) or outer
            if outer is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, outer) or (outer is int and isinstance(value, bool)):
                raise PipslabError(f"{at}: {key} must be {getattr(outer, '__name__', outer)}, got {kind_of(value)} "
                                   f"{excerpt(value)}")
            settings[key] = value
        if budget_key in table:
            settings[budget_key] = _need(table, budget_key, int, at)
            if settings[budget_key] < 1:
                raise PipslabError(f"{at}: {budget_key} must be at least 1, got {settings[budget_key]}")
        return settings

    # [defaults]: settings every stage starts from, its own keys overriding them
    defaults_table = _need(data, "defaults", dict, where, default={})
    if "name" in defaults_table:
        raise PipslabError(f"{where}, defaults: name is each stage's own")
    defaults = settings_of(defaults_table, f"{where}, defaults")
    stages = []
    for i, st in enumerate(stages_data, 1):
        at = f"{where}, stage {i}"
        if not isinstance(st, dict):
            raise PipslabError(f"{at}: must be a table, got {kind_of(st)}")
        sname = _need(st, "name", str, at)
        at = f"{where}, stage {i} ({sname})"
        settings = {**defaults, **settings_of(st, at)}
        budget = settings.pop(budget_key, None)
        if budget is None:
            raise PipslabError(f"{at}: no budget ({budget_key!r}: how many {budget_key} to train)")
        source = settings.get("replay_from")
        if source is not None and source not in [s.name for s in stages]:
            raise PipslabError(f"{at}: replay_from must name an earlier stage (its labels, in this run's folder), got "
                               f"{excerpt(source)}; earlier: {', '.join(s.name for s in stages) or 'none'}")
        if source is not None and not settings.get("replay"):
            raise PipslabError(f"{at}: replay_from fills the replay buffer with an earlier stage's labels: give replay")
        stages.append(Stage(sname, budget, settings))
    ev = _need(data, "evaluation", dict, where)
    unknown = sorted(set(ev) - {"against", "games", "seed"})
    if unknown:
        raise PipslabError(f"{where}, evaluation: unknown key {unknown[0]!r} (known: against, games, seed)")
    against = _need(ev, "against", list, f"{where}, evaluation")
    if not against or not all(isinstance(a, str) for a in against):
        raise PipslabError(f"{where}, evaluation: against must list agent specs")
    games = _need(ev, "games", int, f"{where}, evaluation")
    if games < 1:
        raise PipslabError(f"{where}, evaluation: games must be at least 1, got {games}")
    return Recipe(name, str(data.get("description", "")), game, options, stages, against, games,
                  _need(ev, "seed", int, f"{where}, evaluation", default=1), seed, text, start)


def describe_all() -> str:
    """``pipslab train --recipes``: each recipe, its stages and budgets."""
    lines = []
    for name in recipe_names():
        r = load_recipe(name)
        opts = " ".join(f"{k}={v}" for k, v in r.options.items())
        lines.append(f"{name}: {r.game}{' ' + opts if opts else ''} — {r.description}")
        for i, st in enumerate(r.stages, 1):
            what = ", ".join(f"{k}={v}" for k, v in st.settings.items() if k in ("guide", "epochs", "exploit", "lr"))
            lines.append(f"  {i}. {st.name}: {st.budget:,} {r.unit}s{' (' + what + ')' if what else ''}")
        lines.append(f"  evaluation: {r.eval_games:,} duplicate games against {', '.join(r.against)}")
    return "\n".join(lines)


# ------------------------------------------------------------------ running one
def scaled(value: int, scale: float, low: int) -> int:
    return max(low, int(math.ceil(value * scale)))


def stage_args(recipe: Recipe, index: int, out: Path, scale: float, run_settings: dict):
    """The trainer's args of stage ``index`` (0-based) in run folder ``out``."""
    st = recipe.stages[index]
    trainer = recipe.trainer
    args = trainer.Args(game=recipe.game, options=dict(recipe.options))
    args.seed = recipe.seed
    for key, value in st.settings.items():
        setattr(args, key, value)
    batch = getattr(args, trainer.batch_field)
    setattr(args, trainer.unit + "s", scaled(st.budget, scale, batch))
    for key in SCALED:
        if hasattr(args, key) and getattr(args, key):
            setattr(args, key, scaled(getattr(args, key), scale, batch if key == "eval_every" else 1))
    if args.eval_games:
        args.eval_games = scaled(args.eval_games, scale, MIN_EVAL_GAMES)
    args.out = str(stage_dir(out, recipe, index))
    if st.settings.get("replay_from"):      # an earlier stage's name: its folder in this run
        names = [s.name for s in recipe.stages]
        args.replay_from = str(stage_dir(out, recipe, names.index(st.settings["replay_from"])))
    if index > 0:
        args.init = str(stage_dir(out, recipe, index - 1) / "net.pt")
    else:
        args.init = recipe.start         # a shipped net's name: the card shows no machine path
    for key, value in run_settings.items():
        if value is not None:
            setattr(args, key, value)
    return args


def stage_dir(out: Path, recipe: Recipe, index: int) -> Path:
    return out / "stages" / f"{index + 1}-{recipe.stages[index].name}"


def run_recipe(name: str, out: str, resume: bool = False, scale: float = 1.0, progress: bool = True,
               **run_settings) -> dict:
    """Every stage of recipe ``name`` in ``out`` (resuming the one that was running with
    ``resume``), then the evaluation and the card; returns the card's data."""
    from . import trainer as skeleton
    from .runner import Run, RunInterrupted
    recipe = load_recipe(name)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise PipslabError(f"--scale must be a number above 0 (e.g. 0.002 for a smoke test), got {excerpt(scale)}")
    run_settings = {k: v for k, v in run_settings.items() if v is not None}
    run_settings["progress"] = progress
    trainer = recipe.trainer
    # every stage's settings are checked before anything is written
    probe = [stage_args(recipe, i, Path(out), scale, run_settings) for i in range(len(recipe.stages))]
    for i, a in enumerate(probe):
        init, a.init = a.init, ""
        source = getattr(a, "replay_from", "")
        if source:
            a.replay_from = ""              # an earlier stage, not there yet; parse_recipe checked the name
        if not a.eval_against:
            a.eval_against = list(trainer.default_against(a))
        try:
            a.validate()
        except PipslabError as exc:
            raise PipslabError(f"recipe {recipe.name}, stage {i + 1} ({recipe.stages[i].name}): {exc}") from None
        a.init = init
        if source:
            a.replay_from = source
    skeleton.resolve_device(run_settings.get("device", "auto"))
    if run_settings.get("backend") == "ray":
        skeleton.check_ray()
    command = f"pipslab train --recipe {recipe.name} --out {out}" + (f" --scale {scale:g}" if scale != 1 else "")
    plan = {"recipe": recipe.name, "scale": scale, "recipe_sha": recipe.sha(), "game": recipe.game,
            "options": recipe.options}
    with Run("recipe", out, plan=plan, compare=("recipe", "scale", "recipe_sha"), resume=resume, command=command,
             seeds=recipe.seed, overwrite=False, noun="recipe run", progress=progress,
             products=("net.pt", "curve.csv", "curve.png", "card.json", "model-card.md")) as run:
        run.start(stages=[{"name": s.name, "budget": s.budget} for s in recipe.stages])
        results = []
        for i in range(len(recipe.stages)):
            sdir = stage_dir(run.out, recipe, i)
            args = stage_args(recipe, i, run.out, scale, run_settings)
            done = _finished(sdir)
            if done is not None:
                results.append(done)
                continue
            if sdir.exists() and not (sdir / skeleton.CHECKPOINT).exists():
                shutil.rmtree(sdir)       # started but never checkpointed: start it again
            args.resume = (sdir / skeleton.CHECKPOINT).exists()
            sys.stderr.write(f"recipe {recipe.name}: stage {i + 1}/{len(recipe.stages)} {recipe.stages[i].name}"
                             f"{' (resumed)' if args.resume else ''}\n")
            try:
                skeleton.train(trainer, args, stage={"recipe": recipe.name, "stage": i + 1})
            except RunInterrupted as exc:
                raise RunInterrupted(f"interrupted in stage {i + 1} ({recipe.stages[i].name}) after {exc.done:,} "
                                     f"{trainer.unit}s; resume with: {command} --resume", exc.done, command) from None
            results.append(_finished(sdir))
            run.update(stages_done=i + 1)
        from . import model_card
        games = scaled(recipe.eval_games, scale, MIN_EVAL_GAMES) if scale != 1 else recipe.eval_games
        data = model_card.finish_recipe_run(recipe, run, scale, results, games)
        return data


def _finished(sdir: Path) -> Optional[dict]:
    """A finished stage's record (its ``run.json``'s command, result and sessions), or None."""
    from .runner import read_manifest
    manifest = sdir / "run.json"
    if not manifest.is_file() or not (sdir / "net.pt").is_file():
        return None
    data = read_manifest(manifest)
    if data.get("status") != "done" or "result" not in data:
        return None
    return {"command": data.get("command"), "result": data["result"], "machine": data.get("machine"),
            "device": data.get("device"), "folder": sdir, "git_commit": data.get("git_commit"),
            "git_dirty": data.get("git_dirty")}


def run_command(ns) -> int:
    """``pipslab train --recipe NAME --out DIR ...``."""
    from .runner import RunInterrupted
    if ns.recipe_out is None:
        raise PipslabError("--recipe needs --out DIR: the run folder")
    scale = 1.0 if ns.scale is None else ns.scale
    t0 = time.perf_counter()
    try:
        data = run_recipe(ns.recipe, ns.recipe_out, resume=ns.recipe_resume, scale=scale,
                          progress=ns.recipe_progress, workers=ns.recipe_workers, threads=ns.recipe_threads,
                          backend=ns.recipe_backend, device=ns.recipe_device, tensorboard=ns.recipe_tensorboard)
    except RunInterrupted as exc:
        sys.stdout.flush()
        sys.stderr.write(f"pipslab: {exc}\n")
        return 130
    print(f"recipe {ns.recipe}: {len(data['stages'])} stages in {time.perf_counter() - t0:.0f} s -> "
          f"{ns.recipe_out}/net.pt, {ns.recipe_out}/model-card.md")
    for row in data["evaluation"]["rows"]:
        print(f"  {row['win_rate']:.1%} [{row['win_low']:.1%}, {row['win_high']:.1%}] against {row['opponent']} "
              f"({row['games']} games)")
    return 0


def main(argv=None) -> int:
    """``python -m pipslab.experiments.recipe render|measure NAME... [--nets DIR]``: a shipped
    card rendered again from its JSON, or its recipe's evaluation measured again on this
    code (docs/training.md)."""
    import argparse
    import tempfile

    from . import model_card
    p = argparse.ArgumentParser(prog="python -m pipslab.experiments.recipe")
    p.add_argument("action", choices=("render", "measure"))
    p.add_argument("names", nargs="+")
    p.add_argument("--nets", default=str(Path(__file__).resolve().parents[1] / "agents" / "nets"))
    ns = p.parse_args(argv)

    def run() -> int:
        for name in ns.names:
            if ns.action == "render":
                model_card.render(name, Path(ns.nets))
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    model_card.measure(load_recipe(name), Path(ns.nets), Path(tmp), progress=True)
        return 0
    from .cliargs import guarded
    return guarded("recipe", run)


if __name__ == "__main__":
    raise SystemExit(main())
