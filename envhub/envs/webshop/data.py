"""Where the WebShop env's data comes from, and the shop every session of a process shares.

The data directory is ``WEBSHOP_DATA`` (read by :class:`WebShopSettings`) or an explicit
path; it holds WebShop's release files (``items_shuffle_1000.json`` or ``items_shuffle.json``,
``items_ins_v2_1000.json`` or ``items_ins_v2.json``, and ``items_human_ins.json`` for human
goals). Without it, envhub's embedded catalogue (``envhub/envs/webshop/data/``, made by
:mod:`envhub.envs.webshop.fixtures`) is used.

:class:`ShopData` holds everything read-only (products, prices, goals, search index, noun
tagger) and is built once per (directory, goal kind, seed) per process by
:func:`load_shop_data`, so many sessions share one catalogue (WebShop's shared ``SimServer``).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.core.errors import DataNotFoundError
from envhub.core.registry import DataStatus
from envhub.envs.webshop.catalogue import Catalogue, Product, load_catalogue, product_prices
from envhub.envs.webshop.fixtures import ATTRIBUTES_FILE, HUMAN_FILE, PRODUCTS_FILE
from envhub.envs.webshop.goals import Goal, build_goals, split_goal_ids
from envhub.envs.webshop.nouns import NounTagger, default_noun_tagger
from envhub.envs.webshop.reward import RewardResult, purchase_reward
from envhub.envs.webshop.search import SEARCH_RETURN_N, SearchIndex

__all__ = [
    "EMBEDDED_DIR",
    "ShopData",
    "WebShopSettings",
    "browser_data_status",
    "data_status",
    "load_shop_data",
    "resolve_data_dir",
]

#: envhub's generated catalogue, shipped as package data.
EMBEDDED_DIR = Path(__file__).parent / "data"
#: WebShop's goal shuffle seed (``random.seed(233)`` in ``SimServer``).
WEBSHOP_SEED = 233

_PRODUCT_FILES = (PRODUCTS_FILE, "items_shuffle.json")
_ATTRIBUTE_FILES = (ATTRIBUTES_FILE, "items_ins_v2.json")


class WebShopSettings(BaseSettings):
    """Settings of the WebShop env read from the environment.

    Attributes:
        webshop_data: ``WEBSHOP_DATA``, the directory with WebShop's data files.
    """

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", env_ignore_empty=True)

    webshop_data: Path | None = None


def resolve_data_dir(data_dir: str | Path | None = None, *, settings: WebShopSettings | None = None) -> Path:
    """The directory to load: ``data_dir``, else ``WEBSHOP_DATA``, else the embedded catalogue.

    Args:
        data_dir: an explicit directory.
        settings: where ``WEBSHOP_DATA`` is read from (default: the process environment).

    Raises:
        DataNotFoundError: the chosen directory does not exist.
    """
    if data_dir is not None:
        chosen: Path | None = Path(data_dir)
    else:
        chosen = (settings if settings is not None else WebShopSettings()).webshop_data
    if chosen is None:
        return EMBEDDED_DIR
    if not chosen.is_dir():
        raise DataNotFoundError(
            "The WebShop data directory",
            path=chosen,
            env_var="WEBSHOP_DATA",
            how_to_get="download WebShop's data files (see princeton-nlp/WebShop setup.sh) into one "
            "directory, "
            "or unset WEBSHOP_DATA to use envhub's embedded catalogue.",
        )
    return chosen


def _first_existing(directory: Path, names: Sequence[str]) -> Path:
    for name in names:
        if (directory / name).is_file():
            return directory / name
    return directory / names[0]  # load_catalogue reports it missing with a how-to


@dataclass(frozen=True)
class _Files:
    products: Path
    attributes: Path
    human: Path


def _files(directory: Path) -> _Files:
    return _Files(
        _first_existing(directory, _PRODUCT_FILES),
        _first_existing(directory, _ATTRIBUTE_FILES),
        directory / HUMAN_FILE,
    )


class ShopData:
    """The read-only shop shared by every session: products, prices, goals, search, reward.

    Args:
        catalogue: the products.
        human_goals: use human goals instead of synthetic ones.
        seed: seed of prices, price limits and the goal shuffle (WebShop: 233).
        tagger: the noun tagger for the reward (default: the most faithful one installed).
    """

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        human_goals: bool,
        seed: int = WEBSHOP_SEED,
        tagger: NounTagger | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.human_goals = human_goals
        self.seed = seed
        rng = random.Random(seed)
        self.prices = product_prices(catalogue, rng)
        self.goals: tuple[Goal, ...] = tuple(
            build_goals(catalogue, self.prices, human_goals=human_goals, rng=rng, seed=seed)
        )
        self.splits: Mapping[str, Sequence[str]] = split_goal_ids(len(self.goals))
        self._tagger = tagger
        self._lock = threading.Lock()  # the tagger loads lazily; sessions may run on threads

    @property
    def products(self) -> Mapping[str, Product]:
        """Products by asin."""
        return self.catalogue.by_asin

    @cached_property
    def index(self) -> SearchIndex:
        """The search index (built on first use)."""
        return SearchIndex(self.catalogue)

    @property
    def tagger(self) -> NounTagger:
        """The noun tagger (loaded on first use: spaCy takes about a second)."""
        with self._lock:
            if self._tagger is None:
                self._tagger = default_noun_tagger()
            return self._tagger

    def search(self, query: str) -> list[str]:
        """The asins WebShop's search returns for ``query`` (top 50, best first)."""
        return self.index.search(query)

    def find(self, keywords: Sequence[str], rng: random.Random) -> list[str]:
        """WebShop's ``get_top_n_product_from_keywords``: BM25, or one of its special searches.

        ``<r>`` draws 50 random products (from ``rng``), ``<a> attribute`` lists products with
        that attribute, ``<c> category`` those of a category (first word only, as in WebShop)
        and ``<q> query`` those of a query; anything else is a BM25 search for the words.
        """
        head = keywords[0] if keywords else ""
        rest = " ".join(keywords[1:]).strip()
        products = self.catalogue.products
        if head == "<r>":
            return [p.asin for p in rng.sample(products, k=min(SEARCH_RETURN_N, len(products)))]
        if head == "<a>":
            return [p.asin for p in products if rest in p.attributes]
        if head == "<c>":
            category = keywords[1].strip() if len(keywords) > 1 else ""
            return [p.asin for p in products if p.category == category]
        if head == "<q>":
            return [p.asin for p in products if p.query == rest]
        return self.search(" ".join(keywords))

    def reward(self, asin: str, goal: Goal, options: Mapping[str, str]) -> RewardResult:
        """Score buying ``asin`` with ``options`` for ``goal``."""
        return purchase_reward(
            self.products[asin], goal, price=self.prices[asin], options=options, tagger=self.tagger
        )


@lru_cache(maxsize=8)
def _cached_shop(directory: Path, human_goals: bool, seed: int) -> ShopData:
    files = _files(directory)
    catalogue = load_catalogue(files.products, files.attributes, files.human if human_goals else None)
    return ShopData(catalogue, human_goals=human_goals, seed=seed)


def load_shop_data(
    data_dir: str | Path | None = None, *, human_goals: bool = False, seed: int = WEBSHOP_SEED
) -> ShopData:
    """The shared shop for a data directory (built once per process and arguments).

    The cache holds read-only data only (like WebShop's one ``SimServer`` per process), so
    32 sessions cost one catalogue, one index and one spaCy model.

    Args:
        data_dir: the data directory (default: ``WEBSHOP_DATA`` or the embedded catalogue).
        human_goals: human goals instead of synthetic ones.
        seed: prices, price limits and shuffle seed.

    Raises:
        DataNotFoundError: the directory or a file is missing.
    """
    return _cached_shop(resolve_data_dir(data_dir).resolve(), bool(human_goals), int(seed))


def data_status(settings: WebShopSettings | None = None) -> DataStatus:
    """Whether the WebShop env can run, and from which data (for ``envhub list``)."""
    try:
        directory = resolve_data_dir(settings=settings)
    except DataNotFoundError as exc:
        return DataStatus(available=False, source="WEBSHOP_DATA", how_to_get=exc.message)
    files = _files(directory)
    missing = [p.name for p in (files.products, files.attributes) if not p.is_file()]
    if missing:
        return DataStatus(
            available=False,
            source=str(directory),
            how_to_get=f"{directory} lacks {', '.join(missing)}; copy WebShop's data files there.",
        )
    source = "embedded (envhub's generated catalogue)" if directory == EMBEDDED_DIR else str(directory)
    return DataStatus(available=True, source=source)


def browser_data_status() -> DataStatus:
    """Whether the HTML-mode env can run: the data, selenium, Chromium and ChromeDriver."""
    import importlib.util
    import shutil

    status = data_status()
    if not status.available:
        return status
    if importlib.util.find_spec("selenium") is None:
        return DataStatus(
            available=False, source=status.source, how_to_get="pip install 'envhub-rl[browser]'"
        )
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if missing:
        return DataStatus(
            available=False,
            source=status.source,
            how_to_get=f"{' and '.join(missing)} not on PATH; run scripts/install-system-deps.sh "
            "(Debian: apt-get install chromium chromium-driver).",
        )
    return status
