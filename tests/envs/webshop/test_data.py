"""Where the WebShop data comes from: an explicit directory, WEBSHOP_DATA, or the embedded shop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envhub.core.errors import DataNotFoundError
from envhub.envs.webshop.data import (
    EMBEDDED_DIR,
    WebShopSettings,
    data_status,
    load_shop_data,
    resolve_data_dir,
)
from envhub.envs.webshop.env import WebShopEnv
from envhub.envs.webshop.fixtures import ATTRIBUTES_FILE, PRODUCTS_FILE, write_catalogue


def test_embedded_shop_is_the_default() -> None:
    assert resolve_data_dir(settings=WebShopSettings(webshop_data=None)) == EMBEDDED_DIR
    status = data_status(WebShopSettings(webshop_data=None))
    assert status.available and status.source.startswith("embedded")


def test_webshop_data_setting_points_at_a_directory(tmp_path: Path) -> None:
    write_catalogue(tmp_path, num_products=12, seed=3)
    assert resolve_data_dir(settings=WebShopSettings(webshop_data=tmp_path)) == tmp_path
    assert data_status(WebShopSettings(webshop_data=tmp_path)).source == str(tmp_path)


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="WEBSHOP_DATA"):
        resolve_data_dir(tmp_path / "nowhere")
    status = data_status(WebShopSettings(webshop_data=tmp_path / "nowhere"))
    assert not status.available and "WEBSHOP_DATA" in status.how_to_get


def test_directory_without_product_files_is_reported(tmp_path: Path) -> None:
    status = data_status(WebShopSettings(webshop_data=tmp_path))
    assert not status.available and PRODUCTS_FILE in status.how_to_get


def test_full_release_file_names_are_found(tmp_path: Path) -> None:
    write_catalogue(tmp_path, num_products=12, seed=3)
    (tmp_path / PRODUCTS_FILE).rename(tmp_path / "items_shuffle.json")
    (tmp_path / ATTRIBUTES_FILE).rename(tmp_path / "items_ins_v2.json")
    env = WebShopEnv(data_dir=tmp_path)
    assert len(env.shop.catalogue.products) == 12
    obs, _ = env.reset(options={"task_id": env.task_ids("test")[0]})
    assert obs.startswith("WebShop [SEP] Instruction: [SEP] ")


def test_shop_is_shared_per_directory_and_goal_kind(tmp_path: Path) -> None:
    write_catalogue(tmp_path, num_products=6, seed=4)
    assert load_shop_data(tmp_path) is load_shop_data(str(tmp_path))
    assert load_shop_data(tmp_path, human_goals=True) is not load_shop_data(tmp_path)


def test_write_catalogue_writes_the_requested_number_of_products(tmp_path: Path) -> None:
    write_catalogue(tmp_path, num_products=6, seed=5)
    products = json.loads((tmp_path / PRODUCTS_FILE).read_text())
    assert isinstance(products, list) and len(products) == 6
