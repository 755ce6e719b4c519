"""Groups to JSONL and parquet, and the `envhub rollout` / `envhub rollouts export` commands."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from envhub.cli import app
from envhub.core.errors import ConfigurationError
from envhub.rollout.export import read_jsonl

HEURISTIC = "scripted:envhub.envs.timeseries.policy:HeuristicPolicy"


def test_rollout_command_writes_groups_and_export_makes_step_rows(tmp_path: Path) -> None:
    groups_file = tmp_path / "groups.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "rollout",
            "--env",
            "TimeSeries-v0",
            "--split",
            "test",
            "--count",
            "2",
            "--group-size",
            "2",
            "--policy",
            HEURISTIC,
            "--env-kwarg",
            "images=false",
            "-o",
            str(groups_file),
        ],
    )
    assert result.exit_code == 0, result.output
    groups = list(read_jsonl(groups_file))
    assert len(groups) == 2 and all(len(g.trajectories) == 2 for g in groups)
    steps = sum(t.length for g in groups for t in g.trajectories)

    parquet = tmp_path / "steps.parquet"
    result = runner.invoke(
        app, ["rollouts", "export", str(groups_file), "-o", str(parquet), "--format", "parquet"]
    )
    assert result.exit_code == 0, result.output
    table = pq.read_table(parquet)
    assert table.num_rows == steps
    assert {"uid", "traj_id", "step_idx", "anchor", "reward", "is_action_valid", "episode_return"} <= set(
        table.column_names
    )
    copy = tmp_path / "copy.jsonl"
    assert runner.invoke(app, ["rollouts", "export", str(groups_file), "-o", str(copy)]).exit_code == 0
    assert [g.uid for g in read_jsonl(copy)] == [g.uid for g in groups]


def test_reading_a_missing_or_broken_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="No groups file"):
        list(read_jsonl(tmp_path / "none.jsonl"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{}\n")
    with pytest.raises(ConfigurationError, match=r"broken\.jsonl:1 is not a Group"):
        list(read_jsonl(broken))


def test_trajectory_mode_needs_a_policy_with_a_tokenizer(tmp_path: Path) -> None:
    args = ["rollout", "--env", "TimeSeries-v0", "--count", "1", "--policy", HEURISTIC, "--trajectory-mode"]
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "g.jsonl")])
    assert result.exit_code != 0
    assert "--trajectory-mode needs a policy endpoint with a local tokenizer" in str(result.exception)


# -- exports from a Redis stream (real Redis) ---------------------------------------------------

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
def redis_stream() -> Iterator[str]:
    import redis

    name = f"envhub-test:export:{uuid.uuid4().hex[:10]}"
    yield name
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(f"{name}*"))
    if keys:
        client.delete(*keys)
    client.close()


def _publish(stream: str, uids: list[str]) -> None:
    from envhub.rollout.queue.redis import RedisQueue
    from tests.rollout.queue.conftest import make_group

    async def put() -> None:
        queue = RedisQueue(REDIS_URL, stream=stream, consumer="producer")
        for uid in uids:
            await queue.put(make_group(uid))
        await queue.aclose()

    asyncio.run(put())


def _take(stream: str, n: int, group: str = "trainers") -> list[str]:
    from envhub.rollout.queue.redis import RedisQueue

    async def take() -> list[str]:
        queue = RedisQueue(REDIS_URL, stream=stream, group=group, consumer="trainer-0")
        got = []
        for _ in range(10):
            got += await queue.get(n, timeout_s=0.2)
            if len(got) >= n:
                break
        await queue.ack(got)
        await queue.aclose()
        return [d.group.uid for d in got]

    return asyncio.run(take())


def test_export_from_redis_reads_without_consuming_so_trainers_still_get_every_group(
    tmp_path: Path, redis_stream: str
) -> None:
    _publish(redis_stream, ["g0", "g1", "g2"])
    out = tmp_path / "export.jsonl"
    args = ["rollouts", "export", "--redis-url", REDIS_URL, "--stream", redis_stream, "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [g.uid for g in read_jsonl(out)] == ["g0", "g1", "g2"]
    assert _take(redis_stream, 3) == ["g0", "g1", "g2"]  # the trainers' group still gets all three


def test_export_with_consume_writes_the_file_before_it_acks_anything(
    tmp_path: Path, redis_stream: str
) -> None:
    import redis

    _publish(redis_stream, ["g0", "g1"])
    blocked = tmp_path / "a-directory"
    blocked.mkdir()  # the export cannot write there
    args = ["rollouts", "export", "--redis-url", REDIS_URL, "--stream", redis_stream, "--consume"]
    result = CliRunner().invoke(app, [*args, "-o", str(blocked)])
    assert result.exit_code != 0
    client = redis.Redis.from_url(REDIS_URL)
    assert client.xlen(redis_stream) == 2
    groups = {g["name"]: g for g in client.xinfo_groups(redis_stream)}
    assert groups[b"envhub-export"]["pending"] == 2  # delivered to the export, never acked
    client.close()
    out = tmp_path / "export.jsonl"
    result = CliRunner().invoke(app, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(g.uid for g in read_jsonl(out)) == ["g0", "g1"]
    assert _take(redis_stream, 2) == ["g0", "g1"]  # consuming with its own group took nothing from trainers


@pytest.mark.parametrize("consume", [False, True], ids=["xrange", "consume"])
def test_export_of_a_stream_that_does_not_exist_says_so_and_writes_nothing(
    tmp_path: Path, redis_stream: str, consume: bool
) -> None:
    # A mistyped --stream used to write an empty file and exit 0 (and --consume created the
    # stream and a consumer group on it).
    import redis

    out = tmp_path / "export.jsonl"
    args = ["rollouts", "export", "--redis-url", REDIS_URL, "--stream", redis_stream, "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--consume"] if consume else args)
    assert isinstance(result.exception, ConfigurationError), result.output
    assert redis_stream in str(result.exception) and "--stream" in str(result.exception)
    assert not out.exists()
    client = redis.Redis.from_url(REDIS_URL)
    assert not client.exists(redis_stream)
    client.close()


@pytest.mark.parametrize("group", ["trainers", "trainers:run-7"])
def test_export_never_consumes_through_a_trainers_group(
    tmp_path: Path, redis_stream: str, group: str
) -> None:
    # `--consume --group trainers` acked the trainers' entries into a file: the trainer of that
    # run then never received them.
    _publish(redis_stream, ["g0", "g1"])
    out = tmp_path / "export.jsonl"
    args = ["rollouts", "export", "--redis-url", REDIS_URL, "--stream", redis_stream, "--consume"]
    result = CliRunner().invoke(app, [*args, "--group", group, "-o", str(out)])
    assert isinstance(result.exception, ConfigurationError), result.output
    assert "--group" in str(result.exception) and not out.exists()
    assert _take(redis_stream, 2, group=group) == ["g0", "g1"]
