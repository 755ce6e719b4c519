"""Env packages: families from installed distributions (the ``envhub.envs`` entry-point group).

The distributions here are real ones as far as ``importlib.metadata`` can tell: a ``.dist-info``
folder (METADATA, entry_points.txt) next to the package on ``sys.path``, which is what
``pip install`` leaves behind. tests/integration/test_env_package.py builds and installs a wheel.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import pytest

import envhub
from envhub.core.errors import ConfigurationError
from envhub.envs import registry
from envhub.envs.scaffold import new_env_package

REPO = Path(__file__).resolve().parents[2]


def _fake_dist(site: Path, dist: str, version: str, module: str, entry: str, files: dict[str, str]) -> None:
    """Lay out an installed distribution under ``site``: its module files and its dist-info."""
    pkg = site / module
    pkg.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[envhub.envs]\n{entry}\n")


def _scaffold_files(tmp_path: Path, name: str) -> dict[str, str]:
    root = new_env_package(name, tmp_path / "scaffold")
    src = root / "src" / f"envhub_{name}"
    return {p.name: p.read_text() for p in src.glob("*.py")}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith("envhub_")]:
        del sys.modules[name]
    for env_id in [i for i in gymnasium.registry if i.startswith(("guess/", "dice/"))]:
        gymnasium.registry.pop(env_id)
    registry._plugins = None  # the next call reads the entry points of the real environment again


def test_an_installed_package_is_listed_with_its_version_and_made_lazily(site: Path, tmp_path: Path) -> None:
    _fake_dist(site, "envhub-guess", "1.2.3", "envhub_guess", "guess = envhub_guess.spec:SPECS",
               _scaffold_files(tmp_path, "guess"))  # fmt: skip
    found = registry.reload_plugins()
    assert [(p.spec.id, p.package, p.version) for p in found] == [("guess/Guess-v0", "envhub-guess", "1.2.3")]
    assert "envhub_guess.env" not in sys.modules  # listing imports the spec, not the env
    rows = {row.id: row for row in envhub.list_envs()}
    assert (rows["guess/Guess-v0"].package, rows["guess/Guess-v0"].version) == ("envhub-guess", "1.2.3")
    assert rows["envhub/TimeSeries-v0"].package == "envhub-rl"
    env = envhub.make("guess")
    assert "envhub_guess.env" in sys.modules
    assert env.spec is not None and env.spec.max_episode_steps == 8
    envhub.check_env(env)
    assert gymnasium.make("guess/Guess-v0").reset(options={"task_id": "test-1"})[1]["task_id"] == "test-1"


def test_a_clash_names_both_packages(site: Path, tmp_path: Path) -> None:
    files = _scaffold_files(tmp_path, "guess")
    _fake_dist(site, "envhub-guess", "1.0", "envhub_guess", "guess = envhub_guess.spec:SPECS", files)
    _fake_dist(site, "other-guess", "2.0", "envhub_guess2", "guess = envhub_guess2.spec:SPECS",
               {**files, "spec.py": files["spec.py"].replace("envhub_guess.", "envhub_guess2.")})  # fmt: skip
    with pytest.raises(ConfigurationError) as caught:
        registry.reload_plugins()
    message = str(caught.value)
    assert "'guess/Guess-v0' is registered twice" in message
    assert "envhub-guess 1.0" in message and "other-guess 2.0" in message and "pip uninstall" in message


def test_a_clash_is_one_line_and_exit_2_on_the_command_line(site: Path, tmp_path: Path) -> None:
    files = _scaffold_files(tmp_path, "guess")
    _fake_dist(site, "envhub-guess", "1.0", "envhub_guess", "guess = envhub_guess.spec:SPECS", files)
    _fake_dist(site, "other-guess", "2.0", "envhub_guess", "guess2 = envhub_guess.spec:SPECS", {})
    for args in (["list"], ["serve", "guess"]):
        out = subprocess.run(
            [sys.executable, "-c", "from envhub.cli import main; main()", *args],
            env={"PYTHONPATH": f"{site}:{REPO}", "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 2, (args, out.stderr)
        assert "registered twice" in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


def test_a_package_cannot_take_a_built_in_id(site: Path, tmp_path: Path) -> None:
    files = _scaffold_files(tmp_path, "guess")
    files["spec.py"] = files["spec.py"].replace('id="guess/Guess-v0"', 'id="envhub/TimeSeries-v0"')
    _fake_dist(site, "envhub-guess", "1.0", "envhub_guess", "guess = envhub_guess.spec:SPECS", files)
    with pytest.raises(
        ConfigurationError, match=r"registered twice: by envhub-rl .* \(built in\) and by envhub-guess"
    ):
        registry.reload_plugins()


def test_a_broken_package_is_skipped_with_a_warning(site: Path) -> None:
    _fake_dist(site, "envhub-broken", "0.1", "envhub_broken", "broken = envhub_broken.spec:SPECS",
               {"__init__.py": "", "spec.py": "raise RuntimeError('boom')\n"})  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.reload_plugins() == ()
    assert any(
        "envhub-broken 0.1 failed to load" in str(w.message) and "boom" in str(w.message) for w in caught
    )


def test_envhub_list_shows_the_package(site: Path, tmp_path: Path) -> None:
    _fake_dist(site, "envhub-guess", "1.2.3", "envhub_guess", "guess = envhub_guess.spec:SPECS",
               _scaffold_files(tmp_path, "guess"))  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", "from envhub.cli import main; main()", "list"],
        env={"PYTHONPATH": f"{site}:{REPO}", "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "guess/Guess-v0" in line)
    assert "envhub-guess 1.2.3" in line


def test_env_new_refuses_a_bad_name_and_an_existing_folder(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from envhub.cli import main; main()", "env", "new"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    bad = subprocess.run([*cli, "Bad Name", "-o", str(tmp_path)], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "not a valid env package name" in bad.stderr
    ok = subprocess.run([*cli, "dice", "-o", str(tmp_path)], env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    pyproject = (tmp_path / "envhub-dice" / "pyproject.toml").read_text()
    assert '[project.entry-points."envhub.envs"]\ndice = "envhub_dice.spec:SPECS"' in pyproject
    again = subprocess.run([*cli, "dice", "-o", str(tmp_path)], env=env, capture_output=True, text=True)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_env_new_says_to_install_the_folder_not_a_name_on_pypi(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from envhub.cli import main; main()", "env", "new"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "300"}
    ok = subprocess.run([*cli, "dice"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "pip install ./envhub-dice" in ok.stdout, ok.stdout  # `pip install envhub-dice` asks PyPI


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("rl", "envhub's own distribution"),  # envhub-rl: installing it would replace envhub
        ("envhub-rl", "envhub's own distribution"),
        ("tau", "built-in family"),
        ("alfworld", "built-in family"),
        ("timeseries_ucr", "built-in family"),
    ],
)
def test_env_new_refuses_names_envhub_already_uses(tmp_path: Path, name: str, message: str) -> None:
    cli = [sys.executable, "-c", "from envhub.cli import main; main()", "env", "new"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([*cli, name, "-o", str(tmp_path)], env=env, capture_output=True, text=True)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_env_new_into_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from envhub.cli import main; main()", "env", "new"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    (tmp_path / "file").write_text("x")
    out = subprocess.run(
        [*cli, "dice", "-o", str(tmp_path / "file")], env=env, capture_output=True, text=True
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "give a writable --out" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_an_env_class_that_does_not_import_names_its_package(site: Path, tmp_path: Path) -> None:
    files = _scaffold_files(tmp_path, "guess")
    files["spec.py"] = files["spec.py"].replace("envhub_guess.env:GuessEnv", "envhub_guess.gone:GuessEnv")
    _fake_dist(site, "envhub-guess", "1.0", "envhub_guess", "guess = envhub_guess.spec:SPECS", files)
    registry.reload_plugins()
    with pytest.raises(
        ConfigurationError, match=r"envhub_guess\.gone:GuessEnv.* does not import.*envhub-guess 1\.0"
    ):
        envhub.make("guess/Guess-v0")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from envhub.cli import main; main()",
            "eval",
            "--env",
            "guess/Guess-v0",
            "--policy",
            "builtin",
            "-o",
            str(tmp_path / "o"),
        ],
        env={"PYTHONPATH": f"{site}:{REPO}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "does not import" in out.stderr and not (tmp_path / "o").exists()
