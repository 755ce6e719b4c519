"""Every install hint envhub can print, and every one its docs give, names a distribution and
extras that exist: ``envhub`` on PyPI is another project, so a hint that says ``envhub[...]``
(or an extra pyproject.toml lacks) installs the wrong thing or nothing.

Walked here, without importing the code:

* every string in the package's sources (f-strings with their placeholders kept) and the
  messages of every ``DependencyMissingError(..., extra=...)`` it raises (built for real);
* the ``extra=`` of every ``DependencyMissingError`` and of the test helpers that skip naming an
  extra (``tests/needs.py``): a literal that pyproject.toml defines;
* README.md, docs/, .env.example, the Makefile, scripts/ and the Dockerfiles: every
  ``pip install`` line and every ``<dist>[extra]`` mention.
"""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envhub.core.errors import DependencyMissingError

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DIST = "envhub-rl"
EXTRAS = frozenset(PROJECT["optional-dependencies"])

#: Calls whose ``extra=`` names an envhub extra in a message a user reads.
EXTRA_CALLS = {"DependencyMissingError", "missing", "require", "require_module", "requires_modules"}
#: ``pip install ARGS``: up to the end of the line, a backtick or a closing parenthesis.
PIP_INSTALL = re.compile(r"pip3? install\s+(?P<args>[^\n`)]*)")
#: ``name[extra,...]`` anywhere (the name is checked: envhub-rl, or envhub by mistake).
DIST_WITH_EXTRAS = re.compile(r"(?<![\w./$-])(?P<name>envhub(?:[-_]rl)?)\[(?P<extras>[^\]]*)\]")
#: This checkout given as a path: ``.[x]``, ``'.[x]'``, ``$ROOT[x]``, ``/stub[x]``.
LOCAL_WITH_EXTRAS = re.compile(r"^(?:\.|\$\{?\w+\}?|/[\w/]+)\[(?P<extras>[^\]]*)\]$")
#: Extras written as placeholders in templates and prose: ``{}`` (an f-string's), ``<extra>``,
#: ``$(TEST_EXTRAS)``, ``envhub-rl[extra]``, ``envhub-rl[a,b]``.
PLACEHOLDER = re.compile(r"^(?:\{\}|<\w+>|\$\(?\w+\)?|extras?|a|b)$")

DOCS = [
    "README.md",
    ".env.example",
    "Makefile",
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").rglob("*.md"))),
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "scripts").iterdir()) if p.is_file()),
    *(str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("*/**/Dockerfile"))),
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docker").rglob("*.md"))),
    *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "deploy").rglob("*.md"))),
    "servers/README.md",
]


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal, an f-string as one text with ``{}`` for its placeholders."""
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                inside_fstrings.add(id(value))
                parts.append(value.value if isinstance(value, ast.Constant) else "{}")
            yield node.lineno, "".join(str(p) for p in parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside_fstrings:
            yield node.lineno, node.value


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _python_sources() -> list[Path]:
    return sorted(p for folder in ("envhub", "bench", "tests") for p in (ROOT / folder).rglob("*.py"))


def _unknown(extras: list[str]) -> list[str]:
    return [e for e in extras if e not in EXTRAS and not PLACEHOLDER.match(e)]


def _problems_in(text: str) -> list[str]:
    """What is wrong with the hints in ``text``: the wrong distribution or an unknown extra."""
    problems = []
    for match in DIST_WITH_EXTRAS.finditer(text):
        name, extras = match["name"], [e.strip() for e in match["extras"].split(",") if e.strip()]
        if canonicalize_name(name) != DIST:
            problems.append(f"{match.group(0)!r} names {name!r}, not {DIST!r}")
        problems += [f"{match.group(0)!r}: pyproject.toml has no extra {e!r}" for e in _unknown(extras)]
    for match in PIP_INSTALL.finditer(text):
        try:
            words = shlex.split(match["args"].replace("\\", " "), comments=True)
        except ValueError:  # an unbalanced quote: the hint goes on past this line or string
            words = match["args"].replace("'", " ").replace('"', " ").split()
        skip_next = False
        for word in words:
            if word in ("&&", ";", "|", "||"):
                break  # the next command
            if skip_next or word.startswith("-") or ("$" in word and "[" not in word) or "*" in word:
                skip_next = word in ("-r", "-c", "--find-links", "-f", "--index-url", "-i", "-w", "--target")
                continue
            if "{}" in word or word.endswith((".whl", ".txt")):
                continue
            local = LOCAL_WITH_EXTRAS.match(word)
            if local:
                extras = [e.strip() for e in local["extras"].split(",") if e.strip()]
                problems += [f"{word!r}: pyproject.toml has no extra {e!r}" for e in _unknown(extras)]
                continue
            try:
                requirement = Requirement(word)
            except InvalidRequirement:
                continue  # prose after the command ("(installs the data package)")
            if canonicalize_name(requirement.name) in ("envhub", "envhub-rl") and requirement.name != DIST:
                problems.append(f"'pip install {word}' installs {requirement.name!r}, not {DIST!r}")
    return problems


def test_the_distribution_is_envhub_rl_and_its_self_references_name_it() -> None:
    assert PROJECT["name"] == DIST
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for line in requirements:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name).startswith("envhub"):
                assert requirement.name == DIST, f"extra {extra}: {line}"
                assert requirement.extras <= EXTRAS, f"extra {extra}: {line}"


def test_the_walk_finds_what_it_checks() -> None:
    """The checker itself: it must flag the mistakes this test exists for."""
    assert _problems_in("Install it with: pip install 'envhub[trl]'")
    assert _problems_in("run `pip install envhub` first")
    assert _problems_in("pip install 'envhub-rl[policy]'")
    assert _problems_in('pip install -q -e ".[all,nope]"')
    assert _problems_in("Needs the envhub-rl[search-densest] extra.")
    assert not _problems_in("pip install 'envhub-rl[trl]' (TRL 1.16) or pip install aeon")
    assert not _problems_in('$(BIN)/python -m pip install -q -e ".[$(TEST_EXTRAS)]"')


def test_every_extra_a_hint_names_in_the_code_exists() -> None:
    problems = []
    for path in _python_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _call_name(node) in EXTRA_CALLS):
                continue
            for keyword in node.keywords:
                if (
                    keyword.arg != "extra"
                    or path.name == "needs.py"
                    or path.resolve() == Path(__file__).resolve()
                ):
                    continue
                value = keyword.value
                if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    if not (isinstance(value, ast.Constant) and value.value is None):
                        problems.append(f"{where}:{node.lineno}: extra= is not a literal the test can check")
                    continue
                if value.value not in EXTRAS:
                    problems.append(f"{where}:{node.lineno}: extra={value.value!r} is not in pyproject.toml")
                elif _call_name(node) == "DependencyMissingError":
                    message = str(DependencyMissingError("package", extra=value.value))
                    problems += [f"{where}:{node.lineno}: {p}" for p in _problems_in(message)]
    assert not problems, "\n".join(problems)


def test_every_install_hint_in_the_package_names_envhub_rl_and_real_extras() -> None:
    problems = []
    for path in _python_sources():
        if path.resolve() == Path(__file__).resolve():
            continue  # this file's own examples of wrong hints
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, text in _strings(tree):
            problems += [f"{path.relative_to(ROOT)}:{line}: {p}" for p in _problems_in(text)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", [d for d in DOCS if (ROOT / d).is_file()])
def test_every_install_hint_in_the_docs_names_envhub_rl_and_real_extras(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    problems = [f"{name}: {p}" for p in _problems_in(text)]
    assert not problems, "\n".join(problems)
