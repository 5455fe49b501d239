"""The layering of docs/architecture.md: rules modules import no gymnasium/torch/pandas/
matplotlib; agents never import experiments; nothing in envs/ imports agents or
experiments; and in every package (envs, agents, experiments, src/pipslab) the imports form
no cycle (function-level and lazy imports counted) and no module reaches into another's
``_private`` names."""
import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAVY = {"gymnasium", "torch", "pandas", "matplotlib"}

ENVS = ROOT / "envs"
# the packages, by their folders (src/pipslab is the package root, ``pipslab``)
PACKAGES = {"envs": ENVS, "agents": ROOT / "agents", "experiments": ROOT / "experiments",
            "pipslab": ROOT / "src" / "pipslab"}
# a module path written as a string for a lazy import: "pipslab.envs.x" or "pipslab.envs.x:attr"
MODULE_REF = re.compile(r"pipslab(\.\w+)+(:[\w.]+)?$")


def module_of(path: pathlib.Path) -> str:
    """``envs/dominoes/line.py`` -> ``pipslab.envs.dominoes.line`` (a package: its folder;
    ``src/pipslab/__init__.py`` -> ``pipslab``)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = ("pipslab",) + (parts[2:] if parts[:2] == ("src", "pipslab") else parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether ``pipslab.envs…`` name is a module or package of this repository."""
    parts = name.split(".")
    if parts[0] != "pipslab":
        return False
    if len(parts) == 1:
        return True
    base = ROOT.joinpath(*parts[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def modules(folder: pathlib.Path) -> dict:
    """module name -> path of every module under ``folder``."""
    return {module_of(p): p for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts}


def _package(path: pathlib.Path) -> str:
    me = module_of(path)
    return me if path.name == "__init__.py" else me.rpartition(".")[0]


def _from_module(node: ast.ImportFrom, package: str) -> str:
    if node.level:
        base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _subprocess_targets(tree) -> set:
    """Ids of strings that follow ``"-m"`` in a list or tuple: a module run as a program
    (``[sys.executable, "-m", "pipslab.experiments.cli", …]``), not an import."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            for a, b in zip(node.elts, node.elts[1:]):
                if isinstance(a, ast.Constant) and a.value == "-m" and isinstance(b, ast.Constant):
                    out.add(id(b))
    return out


def references(path: pathlib.Path) -> set:
    """Every module ``path`` imports anywhere — at module level or inside a function —, as
    absolute names (relative imports resolved; ``from P import N`` names ``P.N`` when N is
    a module, and P too when some N is not), plus module paths written as strings for a lazy import
    (``lazy("pipslab.envs.x:f")``, ``import_module("pipslab.x")``; docstrings and
    ``python -m`` targets aside)."""
    package = _package(path)
    tree = ast.parse(path.read_text())
    skip = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)} | _subprocess_targets(tree)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            subs = [f"{module}.{a.name}" for a in node.names]
            if all(is_module(m) for m in subs):  # from P import submodule: the edge is to the submodule
                out.update(subs)
            else:
                out.add(module)
                out.update(subs)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
              and MODULE_REF.match(node.value)):
            out.add(node.value.partition(":")[0])
    return out


def layer(name: str) -> str:
    """The layer a module name belongs to: ``pipslab.agents.td`` -> ``agents``; a third-party
    module -> its top-level name (``torch``)."""
    parts = name.split(".")
    return parts[1] if parts[0] == "pipslab" and len(parts) > 1 else parts[0]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(path: pathlib.Path, text: str = None) -> set:
    """``"file:line from M import _x"`` / ``"file:line M._x"`` for every ``_private`` name
    of another pipslab module that ``path`` imports or reads as an attribute of an imported
    module (``from .m import _x``, ``m._x``, ``pipslab.x.m._x``), anywhere in the file
    (``text``: read instead of the file's)."""
    me, package = module_of(path), _package(path)
    tree = ast.parse(path.read_text() if text is None else text)
    where = path.relative_to(ROOT)
    bound = {}   # local name -> the pipslab module it stands for
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            if not is_module(module):
                continue
            for a in node.names:
                sub = f"{module}.{a.name}"
                if is_module(sub):
                    bound[a.asname or a.name] = sub
                if _private(a.name) and module != me:
                    out.add(f"{where}:{node.lineno} from {module} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if is_module(a.name):
                    bound[a.asname] = a.name if a.asname else None
                    if not a.asname:
                        bound["pipslab"] = "pipslab"
    bound = {k: v for k, v in bound.items() if k and v}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                owner = ".".join([bound[value.id]] + chain[::-1])
                if is_module(owner) and owner != me:
                    out.add(f"{where}:{node.lineno} {owner}.{node.attr}")
    return out


def import_graph(folder: pathlib.Path) -> dict:
    """module -> the modules of the same folder it imports (explicit imports, function-level
    and lazy ones included; the implicit import of a module's parent packages is no edge)."""
    mods = modules(folder)
    return {m: sorted(r for r in references(p) if r in mods and r != m) for m, p in mods.items()}


def cycles(graph: dict) -> set:
    """The import cycles of ``graph``: its strongly connected parts of more than one module
    (each module of a part reaches every other one), as ``"cycle among a, b, c (a -> b ->
    c -> a)"`` with one cycle through the part's first module."""
    index, low, stack, on, parts = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(part)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return {f"cycle among {', '.join(sorted(part))} ({' -> '.join(_a_cycle(graph, part))})" for part in parts}


def _a_cycle(graph: dict, part: set) -> list:
    """A shortest way from the part's first module back to itself, inside the part."""
    start = min(part)
    came = {start: None}
    frontier = [start]
    while True:
        nxt = []
        for v in frontier:
            for w in graph[v]:
                if w == start:
                    path = [v]
                    while came[path[-1]] is not None:
                        path.append(came[path[-1]])
                    return path[::-1] + [start]
                if w in part and w not in came:
                    came[w] = v
                    nxt.append(w)
        frontier = nxt


def violations() -> set:
    """Every import cycle inside a package and every cross-module use of a private name."""
    out = set()
    for folder in PACKAGES.values():
        out |= cycles(import_graph(folder))
        for p in modules(folder).values():
            out |= {f"private: {u}" for u in private_uses(p)}
    return out


# Violations still to fix: none.  (The _gnubg import of agents/search_backgammon.py went with
# the evaluator seam of issue #20.)  Left, though no check here sees them: the
# ``GAMES[name]`` lookups of experiments/train_dominoes.py and agents/search_dominoes.py:95,
# which are to ask ``get_game(name)``.  A violation found later and not fixed at once is
# listed here with the file and line the check prints.
KNOWN = set()


def _without_lines(items) -> set:
    """The violations without their line numbers (an edit above one moves it)."""
    return {re.sub(r" \(.*\)$", "", re.sub(r"(\.py):\d+ ", r"\1 ", v)) for v in items}


def test_references_see_through_the_namespace():
    # the checks below are only as good as this: absolute, relative and lazy imports of the
    # pipslab namespace resolve to their layer
    refs = references(ROOT / "agents" / "__init__.py")
    assert any(layer(r) == "envs" for r in refs)
    assert layer("pipslab.experiments.cli") == "experiments" and layer("torch.nn") == "torch"
    assert module_of(ROOT / "src" / "pipslab" / "__init__.py") == "pipslab"
    assert "pipslab.experiments.tournament" in references(ROOT / "experiments" / "cli.py")   # a string, lazily


def test_the_checks_find_what_they_look_for():
    # every part of a cycle, and both kinds of private use (also inside a function), are seen
    assert cycles({"a": ["b"], "b": ["c", "a"], "c": ["a"], "d": ["a"]}) == {"cycle among a, b, c (a -> b -> a)"}
    assert cycles({"a": ["b"], "b": []}) == set()
    text = ("from .registry import _REGISTRY, register\nfrom pipslab.agents import registry\n"
            "def f():\n    import pipslab.envs.game\n"
            "    return registry._load(), registry.make_agent, pipslab.envs.game._call, _REGISTRY._x\n")
    assert private_uses(ROOT / "agents" / "base.py", text) == {
        "agents/base.py:1 from pipslab.agents.registry import _REGISTRY",
        "agents/base.py:5 pipslab.agents.registry._load", "agents/base.py:5 pipslab.envs.game._call"}


def test_rules_modules_stay_pure():
    rules = [p for p in ENVS.rglob("*.py") if not p.name.endswith("env.py") and p.name != "__init__.py"
             or p.parent.name == "backgammon" and p.name == "__init__.py"]
    assert len(rules) >= 10
    for p in rules:
        bad = {r for r in references(p) if layer(r) in HEAVY | {"agents", "experiments"}}
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def test_agents_never_import_experiments():
    agents = list((ROOT / "agents").rglob("*.py"))
    assert len(agents) >= 10
    for p in agents:
        bad = {r for r in references(p) if layer(r) in {"experiments", "pandas", "matplotlib"}}
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def test_envs_never_import_agents_or_experiments():
    # no exceptions: an env adapter given an agent *name* has it made by the factory that
    # pipslab.agents installs (pipslab.envs.opponents), not by importing the registry
    for p in ENVS.rglob("*.py"):
        for name in references(p):
            top = name.split(".")
            assert top[0] not in ("agents", "experiments") and top[:2] not in (
                ["pipslab", "agents"], ["pipslab", "experiments"]), f"{p.relative_to(ROOT)} imports {name}"


def test_the_agent_registry_imports_no_plug_in():
    # plug-ins import the registry, never the other way: the built-in catalogue
    # (agents/builtin.py) is imported by the package, which hands it to the registry
    graph = import_graph(ROOT / "agents")
    assert graph["pipslab.agents.registry"] == ["pipslab.agents.base"]
    assert "pipslab.agents.builtin" in graph["pipslab.agents"]
    assert "pipslab.agents.registry" not in graph["pipslab.agents.builtin"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycles_and_no_private_imports(package):
    found = set()
    folder = PACKAGES[package]
    found |= cycles(import_graph(folder))
    for p in modules(folder).values():
        found |= {f"private: {u}" for u in private_uses(p)}
    new = _without_lines(found) - _without_lines(KNOWN)
    assert not new, "\n".join(sorted(new))


def test_the_known_violations_are_still_there():
    # a listed violation that is gone is taken off KNOWN (so that it cannot come back unseen)
    gone = _without_lines(KNOWN) - _without_lines(violations())
    assert not gone, "fixed, take off KNOWN: " + "; ".join(sorted(gone))


def test_no_violations_at_all():
    # KNOWN is empty: every layer rule holds (a violation listed in KNOWN again marks this
    # test xfail(strict=True) until it is fixed)
    assert not violations(), "\n".join(sorted(violations()))
