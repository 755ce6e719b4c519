"""Each family's breakdown (EnvSpec.breakdown) labels its tasks; eval never names a family."""

from __future__ import annotations

from pathlib import Path

import pytest

from envhub.core.registry import load_entry_point
from envhub.envs.registry import make, specs


def test_eval_code_names_no_family() -> None:
    source = "".join(p.read_text() for p in (Path(__file__).parents[2] / "envhub" / "eval").glob("*.py"))
    for word in ("alfworld", "webshop", "task_type", "anomaly_kind", "hops", "score_bucket"):
        assert word not in source.lower().replace("envhub/", ""), word


@pytest.mark.parametrize(
    ("env_id", "dimension"),
    [
        ("envhub/ALFWorld-v0", "task_type"),
        ("envhub/TimeSeries-v0", "anomaly_kind"),
        ("envhub/SearchQA-v0", "hops"),
        ("envhub/WebShop-v0", "score_bucket"),
    ],
)
def test_every_task_of_a_family_gets_a_label(env_id: str, dimension: str) -> None:
    spec = next(s for s in specs() if s.id == env_id)
    assert spec.breakdown is not None
    fn = load_entry_point(spec.breakdown)
    if not spec.status().available:
        pytest.skip(spec.status().how_to_get)
    env = make(env_id)
    split = "test" if "test" in spec.splits else spec.splits[-1]
    labels = {fn(t, 0.0)[dimension] for t in env.unwrapped.task_ids(split)[:60]}  # type: ignore[attr-defined]
    env.close()
    assert labels and all(isinstance(label, str) and label for label in labels)
    if dimension == "hops":
        assert {"1", "2"} <= labels  # single- and multi-hop questions
    if dimension == "anomaly_kind":
        assert len(labels) >= 5


def test_webshop_score_buckets() -> None:
    from envhub.envs.webshop.env import breakdown

    got = [breakdown("t", s)["score_bucket"] for s in (0.0, 0.1, 0.25, 0.6, 0.99, 1.0)]
    assert got == ["0", "(0,0.25)", "[0.25,0.5)", "[0.5,0.75)", "[0.75,1)", "1"]
