"""DESIGN.md's layering: rules modules import no gymnasium/torch/pandas/matplotlib; agents
never import experiments; rules never import agents or experiments."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAVY = {"gymnasium", "torch", "pandas", "matplotlib"}


def imported(path: pathlib.Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_rules_modules_stay_pure():
    rules = [p for p in (ROOT / "envs").rglob("*.py") if not p.name.endswith("env.py") and p.name != "__init__.py"
             or p.parent.name == "backgammon" and p.name == "__init__.py"]
    assert len(rules) >= 10
    for p in rules:
        bad = imported(p) & (HEAVY | {"agents", "experiments"})
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def module_level_imports(path: pathlib.Path) -> set:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_envs_do_not_depend_on_agents_or_experiments():
    # the env adapters may look an agent *name* up in the registry inside a function, for
    # convenience; at module level they import neither agents nor experiments
    for p in (ROOT / "envs").rglob("*.py"):
        assert not module_level_imports(p) & {"agents", "experiments"}, p


def test_agents_never_import_experiments():
    for p in (ROOT / "agents").rglob("*.py"):
        assert "experiments" not in imported(p), p
        assert not imported(p) & {"pandas", "matplotlib"}, p
