"""The viewer in real headless Chromium: the numbers a user reads are envhub.algos' numbers.

Each test records a run the way envhub-train writes one (real rollouts of TimeSeries played by
its random policy through the rollout engine, written by the trainer's group writer), serves
the viewer on loopback, walks the pages as a user would (overview -> group -> step) and reads
the values off the page.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from fastapi import FastAPI

from envhub.algos import compute_advantages, default_config, hgpo_levels, step_advantages
from envhub.core.records import Group, StepBatch
from envhub.envs import resolve
from envhub.view import create_app, open_source
from tests.view.conftest import REDIS
from tests.view.recorded import ENV, SOKOBAN, play_groups, record_eval, record_run

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _screenshots(tmp_path: Path) -> Path:
    """Where the pages' screenshots go: docs/ (the README's and docs/viewer.md's pictures) only
    with ENVHUB_UPDATE_SCREENSHOTS=1, else the test's folder, so that a test run leaves the tree
    as it found it."""
    return DOCS if os.environ.get("ENVHUB_UPDATE_SCREENSHOTS") == "1" else tmp_path


Served = Callable[[FastAPI], AbstractContextManager[str]]


def _rows(groups: list[Group]) -> list[tuple[str, str, int]]:
    """(uid, traj_id, step_idx) of each StepBatch row, in StepBatch.from_groups order."""
    return [(g.uid, t.traj_id, s.step_idx) for g in groups for t in g.trajectories for s in t.steps]


def _where(link: str) -> tuple[str, str, int]:
    """(uid, traj_id, step_idx) of a step permalink."""
    query = parse_qs(urlsplit(link).query)
    return query["uid"][0], query["traj"][0], int(query["step"][0])


def _value(driver: Any, css: str) -> float:
    from selenium.webdriver.common.by import By

    return float(driver.find_element(By.CSS_SELECTOR, css).get_attribute("data-value"))


def _open_step(driver: Any, base: str, uid: str, traj: str, step: int) -> None:
    """Overview -> the group's link -> the step's cell, by clicking."""
    from selenium.webdriver.common.by import By

    driver.get(base + "/?batch=iter_000001")
    driver.find_element(By.CSS_SELECTOR, f'tr.group-row[data-uid="{uid}"] a.group-link').click()
    driver.find_element(By.CSS_SELECTOR, f'a.step-link[data-traj="{traj}"][data-step="{step}"]').click()
    assert driver.find_element(By.ID, "permalink").text.startswith("/step?")


def test_a_gigpo_step_shows_the_step_advantage_algos_computes(
    browser: Any, served: Served, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    recorded = record_run(tmp_path / "gigpo", algo="gigpo", agentocr=True)
    groups = recorded[1]
    config = default_config("gigpo", resolve(ENV))
    # What the trainer computes on iteration 1's batch, and GiGPO's step-level term alone.
    batch = StepBatch.from_groups(groups)
    total = compute_advantages(batch, "gigpo", config=config)
    step_term = step_advantages(
        batch, mode=config.mode, gamma=config.gamma, invalid_penalty=config.invalid_penalty
    )
    rows = _rows(groups)
    row = max(range(len(rows)), key=lambda i: abs(step_term[i]))
    assert step_term[row] != 0.0  # a step whose anchor group has different returns
    uid, traj, step = rows[row]
    with served(create_app(open_source(str(tmp_path / "gigpo")))) as base:
        _open_step(browser, base, uid, traj, step)
        assert _value(browser, "#step-advantage") == step_term[row]
        assert _value(browser, "#advantage") == total[row]
        # The anchor's other steps are linked, across trajectories, each with its own A^S.
        peers = browser.find_elements(By.CSS_SELECTOR, "#anchor-peers a.peer")
        anchor = batch.anchor[row]
        expected = {rows[i] for i in range(len(rows)) if rows[i][0] == uid and batch.anchor[i] == anchor}
        assert len(peers) == len(expected) >= 2
        assert len({r[1] for r in expected}) >= 2  # the group spans trajectories
        other = next(p for p in peers if _where(p.get_attribute("href"))[1] != traj)
        other.click()
        shown = (_value(browser, "#step-advantage"), _value(browser, "#advantage"))
        permalink = browser.find_element(By.ID, "permalink").text
        peer_row = rows.index(_where(permalink))
        assert peer_row in {rows.index(r) for r in expected}
        assert shown == (step_term[peer_row], total[peer_row])
        # The permalink opens the same step in a fresh load.
        browser.get(base + permalink)
        assert _value(browser, "#step-advantage") == step_term[peer_row]
        # The group page, whose anchor groups list the step: the screenshot the README shows.
        browser.find_element(By.CSS_SELECTOR, "header nav a:nth-of-type(3)").click()
        listed = browser.find_elements(By.CSS_SELECTOR, ".anchor-group a")
        assert permalink in {"/" + a.get_attribute("href").split("/", 3)[3] for a in listed}
        assert browser.save_screenshot(str(_screenshots(tmp_path) / "viewer.png"))


def test_an_hgpo_step_shows_its_levels_and_the_advantage_algos_computes(
    browser: Any, served: Served, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    settings = {"history_length": 2, "length_weight_alpha": 1.0}
    groups = record_run(tmp_path / "hgpo", algo="hgpo", env_id=SOKOBAN, advantage=settings)[1]
    config = default_config("hgpo", resolve(SOKOBAN), **settings)
    batch = StepBatch.from_groups(groups)
    total = compute_advantages(batch, "hgpo", config=config)
    levels = hgpo_levels(
        batch, mode=config.mode, history_length=2, length_weight_alpha=1.0, gamma=config.gamma
    )
    rows = _rows(groups)
    # A deep step whose level-2 group (same last three anchors) counted.
    row = next(i for i in range(len(rows)) if levels[2].used[i] and total[i] != 0.0)
    uid, traj, step = rows[row]
    with served(create_app(open_source(str(tmp_path / "hgpo")))) as base:
        _open_step(browser, base, uid, traj, step)
        assert _value(browser, "#advantage") == total[row]
        shown = browser.find_elements(By.CSS_SELECTOR, "#hgpo-levels tr.level")
        assert [int(r.get_attribute("data-level")) for r in shown] == [0, 1, 2]
        assert [float(r.get_attribute("data-weight")) for r in shown] == [2.0, 3.0, 4.0]
        for tr, level in zip(shown, levels, strict=True):
            cell = tr.find_element(By.CSS_SELECTOR, ".level-advantage")
            assert float(cell.get_attribute("data-value")) == level.advantage[row]
            assert tr.get_attribute("data-used") == str(bool(level.used[row])).lower()


def test_an_agentocr_step_shows_its_history_image(browser: Any, served: Served, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    groups = record_run(tmp_path / "ocr", algo="gigpo", iterations=1, agentocr=True)[1]
    traj = max(groups[0].trajectories, key=lambda t: len(t.steps))
    stored = traj.steps[3].history_image
    assert stored is not None
    with served(create_app(open_source(str(tmp_path / "ocr")))) as base:
        _open_step(browser, base, groups[0].uid, traj.traj_id, traj.steps[3].step_idx)
        image = browser.find_element(By.ID, "history-image")
        assert image.is_displayed()
        width = browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image)
        assert width > 0  # the browser decoded it
        assert httpx.get(image.get_attribute("src")).content == stored
        # Beside the text: the observation is on the same page.
        assert browser.find_element(By.ID, "observation").text.strip()
        assert browser.save_screenshot(str(_screenshots(tmp_path) / "viewer-step.png"))


def _xinfo(stream: str) -> list[dict[str, Any]]:
    import redis

    client = redis.Redis.from_url(REDIS, decode_responses=True)
    try:
        groups = client.xinfo_groups(stream)
        consumers = {g["name"]: client.xinfo_consumers(stream, g["name"]) for g in groups}
    finally:
        client.close()
    return [
        {
            **g,
            "consumers": [
                {k: v for k, v in c.items() if k not in ("idle", "inactive")} for c in consumers[g["name"]]
            ],
        }
        for g in groups
    ]


def test_the_stream_view_consumes_nothing(browser: Any, served: Served, stream: str) -> None:
    from selenium.webdriver.common.by import By

    from envhub.rollout.queue.redis import RedisQueue

    groups = play_groups(tasks=3)

    async def publish_and_take_one() -> None:
        queue = RedisQueue(REDIS, stream=stream, consumer="trainer-0")
        for g in groups:
            await queue.put(g)
        taken = await queue.get(1, timeout_s=2)  # held, not acked: one pending, two undelivered
        assert len(taken) == 1
        await queue.aclose()

    asyncio.run(publish_and_take_one())
    before = _xinfo(stream)
    assert before[0]["pending"] == 1 and before[0]["lag"] == 2
    config = default_config("gigpo", resolve(ENV))
    source = open_source(REDIS, stream=stream)
    with served(create_app(source)) as base:
        browser.get(base + "/")
        links = browser.find_elements(By.CSS_SELECTOR, "a.group-link")
        assert len(links) == 3  # pending and undelivered entries alike
        g = groups[1]
        browser.find_element(By.CSS_SELECTOR, f'tr.group-row[data-uid="{g.uid}"] a.group-link').click()
        traj = g.trajectories[-1]
        browser.find_element(
            By.CSS_SELECTOR, f'a.step-link[data-traj="{traj.traj_id}"][data-step="0"]'
        ).click()
        expected = compute_advantages(StepBatch.from_groups([g]), "gigpo", config=config)
        row = _rows([g]).index((g.uid, traj.traj_id, 0))
        assert _value(browser, "#advantage") == expected[row]
    source.close()
    assert _xinfo(stream) == before


def _apply(driver: Any) -> None:
    """Submit the filter form and wait for the new page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    table = driver.find_element(By.ID, "groups")
    driver.find_element(By.ID, "apply-filters").click()
    WebDriverWait(driver, 10).until(expected_conditions.staleness_of(table))


def test_filters_keep_the_groups_asked_for(browser: Any, served: Served, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    recorded = record_run(tmp_path / "run", algo="grpo")
    with served(create_app(open_source(str(tmp_path / "run")))) as base:
        browser.get(base + "/")
        every = {g.uid for gs in recorded.values() for g in gs}
        assert {
            r.get_attribute("data-uid") for r in browser.find_elements(By.CSS_SELECTOR, "tr.group-row")
        } == every
        task = recorded[2][0].task_id
        Select(browser.find_element(By.ID, "filter-task")).select_by_value(task)
        Select(browser.find_element(By.ID, "filter-version")).select_by_value("1")
        _apply(browser)
        shown = {r.get_attribute("data-uid") for r in browser.find_elements(By.CSS_SELECTOR, "tr.group-row")}
        assert shown == {g.uid for g in recorded[2] if g.task_id == task}
        Select(browser.find_element(By.ID, "filter-task")).select_by_value("")
        Select(browser.find_element(By.ID, "filter-version")).select_by_value("")
        Select(browser.find_element(By.ID, "filter-success")).select_by_value("won")
        _apply(browser)
        shown = {r.get_attribute("data-uid") for r in browser.find_elements(By.CSS_SELECTOR, "tr.group-row")}
        assert shown == {g.uid for gs in recorded.values() for g in gs if any(t.won for t in g.trajectories)}
        assert shown != every
        # The learning curves carry the validation points.
        dots = browser.find_elements(By.CSS_SELECTOR, "#curve-rollout-success circle.val")
        assert len(dots) == 2


def test_an_eval_report_shows_its_numbers_and_its_episodes_credit(
    browser: Any, served: Served, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    groups = record_eval(tmp_path / "eval")
    config = default_config("gigpo", resolve(ENV))
    with served(create_app(open_source(str(tmp_path / "eval")))) as base:
        browser.get(base + "/")
        summary = browser.find_element(By.ID, "summary").text
        assert "pass@k 4 0.750 [0.000, 1.000]" in summary
        assert "anomaly_kind = spike" in summary
        assert len(browser.find_elements(By.CSS_SELECTOR, "tr.group-row")) == len(groups)
        g = groups[2]
        traj = g.trajectories[-1]
        browser.find_element(By.CSS_SELECTOR, f'tr.group-row[data-uid="{g.uid}"] a.group-link').click()
        browser.find_element(
            By.CSS_SELECTOR, f'a.step-link[data-traj="{traj.traj_id}"][data-step="1"]'
        ).click()
        expected = compute_advantages(StepBatch.from_groups([g]), "gigpo", config=config)
        assert _value(browser, "#advantage") == expected[_rows([g]).index((g.uid, traj.traj_id, 1))]
