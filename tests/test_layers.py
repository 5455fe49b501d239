"""DESIGN.md's layering: rules modules import no gymnasium/torch/pandas/matplotlib; agents
never import experiments; nothing in envs/ imports agents or experiments, and the imports
inside envs/ form no cycle (function-level and lazy imports counted)."""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAVY = {"gymnasium", "torch", "pandas", "matplotlib"}


ENVS = ROOT / "envs"
# a module path written as a string for a lazy import: "pipslab.envs.x" or "pipslab.envs.x:attr"
MODULE_REF = re.compile(r"pipslab(\.\w+)+(:[\w.]+)?$")


def module_of(path: pathlib.Path) -> str:
    """``envs/dominoes/line.py`` -> ``pipslab.envs.dominoes.line`` (a package: its folder)."""
    parts = ("pipslab",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether ``pipslab.envs…`` name is a module or package of this repository."""
    parts = name.split(".")
    if parts[0] != "pipslab" or len(parts) < 2:
        return False
    base = ROOT.joinpath(*parts[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def references(path: pathlib.Path) -> set:
    """Every module ``path`` imports anywhere — at module level or inside a function —, as
    absolute names (relative imports resolved; ``from P import N`` names ``P.N`` when N is
    a module, and P too when some N is not), plus module paths written as strings for a lazy import
    (``lazy("pipslab.envs.x:f")``, ``import_module("pipslab.x")``; docstrings aside)."""
    me = module_of(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            subs = [f"{module}.{a.name}" for a in node.names]
            if all(is_module(m) for m in subs):  # from P import submodule: the edge is to the submodule
                out.update(subs)
            else:
                out.add(module)
                out.update(subs)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and MODULE_REF.match(node.value)):
            out.add(node.value.partition(":")[0])
    return out


def layer(name: str) -> str:
    """The layer a module name belongs to: ``pipslab.agents.td`` -> ``agents``; a third-party
    module -> its top-level name (``torch``)."""
    parts = name.split(".")
    return parts[1] if parts[0] == "pipslab" and len(parts) > 1 else parts[0]


def test_references_see_through_the_namespace():
    # the checks below are only as good as this: absolute, relative and lazy imports of the
    # pipslab namespace resolve to their layer
    refs = references(ROOT / "agents" / "__init__.py")
    assert any(layer(r) == "envs" for r in refs)
    assert layer("pipslab.experiments.cli") == "experiments" and layer("torch.nn") == "torch"


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


def test_envs_import_graph_has_no_cycles():
    # edges are explicit imports, function-level and lazy ones included (the implicit import
    # of a module's parent packages is not an edge)
    modules = {module_of(p): p for p in ENVS.rglob("*.py")}
    graph = {m: sorted(r for r in references(p) if r in modules and r != m) for m, p in modules.items()}
    assert "pipslab.envs.dominoes.engine" in graph and graph["pipslab.envs.dominoes.engine"]
    state = dict.fromkeys(graph, 0)  # 0 new, 1 on the path, 2 done
    path = []

    def visit(m):
        state[m] = 1
        path.append(m)
        for n in graph[m]:
            if state[n] == 1:
                cycle = path[path.index(n):] + [n]
                raise AssertionError("import cycle inside envs/: " + " -> ".join(cycle))
            if state[n] == 0:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if state[m] == 0:
            visit(m)
