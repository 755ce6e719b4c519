"""The WebShop env in a real browser: selenium drives headless Chromium over the shop site."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from envhub.core.env import AgentEnv, Outcome
from envhub.core.errors import ConfigurationError, DependencyMissingError
from envhub.envs.webshop.data import WEBSHOP_SEED, ShopData, load_shop_data
from envhub.envs.webshop.env import WIN_REWARD, clean_observation
from envhub.envs.webshop.shop import join_texts, parse_action

__all__ = ["CHROMIUM_FLAGS", "ShopServer", "WebShopHTMLEnv"]

#: Flags for Debian's headless Chromium: no sandbox (containers run as root), no network
#: chatter beyond the shop on loopback, a fresh profile per browser.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1000",
)

# The page as WebShop's text env sees it: text nodes outside script/style/head (CSS hiding
# is ignored, as BeautifulSoup ignores it), buttons and product links by their text, option
# radios by value, the search bar, and the page's id/kind/reward from its <meta>/<script>.
_READ_PAGE_JS = """
const skip = new Set(["SCRIPT", "STYLE", "HEAD", "TITLE", "META", "NOSCRIPT", "TEMPLATE"]);
const texts = [];
const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const parent = n.parentElement;
  if (parent && !skip.has(parent.tagName)) texts.push(n.nodeValue);
}
const entries = [];
for (const selector of [".btn", ".product-link"]) {
  for (const el of document.querySelectorAll(selector)) {
    entries.push([el.textContent.toLowerCase(), el, false]);
  }
}
for (const el of document.querySelectorAll('input[type="radio"]')) entries.push([el.value, el, true]);
const meta = (name) => {
  const m = document.querySelector(`meta[name="${name}"]`);
  return m ? m.content : null;
};
const reward = document.getElementById("reward-info");
return {
  texts: texts,
  entries: entries,
  has_search_bar: document.getElementById("search_input") !== null,
  page_id: meta("page-id"),
  kind: meta("page-kind"),
  reward: reward ? reward.textContent : null,
};
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ShopServer:
    """The shop site served by uvicorn on a loopback port, in a background thread.

    Args:
        shop: the shop data to serve.
        show_attrs: offer the Attributes sub-page.
        port: the port (default: a free one).
    """

    def __init__(self, shop: ShopData, *, show_attrs: bool = False, port: int | None = None) -> None:
        import uvicorn

        from envhub.envs.webshop.site import create_shop_app

        self.port = port or _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        app = create_shop_app(shop, show_attrs=show_attrs)
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self._thread = threading.Thread(target=self._server.run, name="webshop-site", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise ConfigurationError(
                    f"The WebShop site did not start on {self.base_url}.", port=self.port
                )
            time.sleep(0.02)

    def close(self) -> None:
        """Stop the server and wait for its thread."""
        self._server.should_exit = True
        self._thread.join(timeout=10)


def _start_browser(chromium: str, chromedriver: str, profile: str) -> Any:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise DependencyMissingError("selenium", extra="browser") from exc
    for path, package in ((chromium, "chromium"), (chromedriver, "chromium-driver")):
        if shutil.which(path) is None and not Path(path).is_file():
            raise DependencyMissingError(
                f"{path} (Debian package {package}; run scripts/install-system-deps.sh)", extra="browser"
            )
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which(chromium) or chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(
        service=Service(executable_path=shutil.which(chromedriver) or chromedriver), options=options
    )


class WebShopHTMLEnv(AgentEnv):
    """WebShop through a real browser: envhub's shop site driven by selenium and headless Chromium.

    ## Description
    The same shop, goals and reward as ``envhub/WebShop-v0``, but every page is a real HTML
    page served by envhub's FastAPI site (local assets only) and every action is performed
    in headless Chromium through selenium: typing into the search bar, clicking buttons,
    product links and option radios.

    ## Action Space
    As ``envhub/WebShop-v0``: ``search[keywords]`` and ``click[x]`` for a clickable ``x`` of
    the page. A search from a page without a search bar opens the search URL directly (the
    text env allows search from any page, and so does this one).

    ## Observation Space
    The page's text nodes joined by ``" [SEP] "``, read from the DOM; identical to the text
    env's observation of the same state.

    ## Rewards
    10 when the purchase's WebShop score is 1.0, else 0; the score is read from the done page.

    ## Starting State
    The search page of goal ``task_id`` (WebShop's seeded goal order; test = goals 0-499).

    ## Episode End
    Terminates on ``click[buy now]``; ``TimeLimit`` (15 steps) truncates.

    ## Information
    The text env's keys: ``anchor``, ``admissible_actions``, ``won``, ``task_id``,
    ``task_score``, ``is_action_valid``, ``available_actions``, ``instruction``, ``page``,
    ``reward_info``, ``purchased``.

    ## Arguments
    | argument | default | meaning |
    | --- | --- | --- |
    | ``data_dir`` | ``WEBSHOP_DATA`` or embedded | directory of WebShop's data files |
    | ``human_goals`` | ``False`` | human instructions instead of synthetic ones |
    | ``goal_seed`` | ``233`` | seed of prices, price limits and the goal shuffle (WebShop's) |
    | ``show_attrs`` | ``False`` | offer the item's Attributes sub-page |
    | ``base_url`` | ``None`` | a running shop site (``envhub serve-shop``); default: start one |
    | ``chromium`` / ``chromedriver`` | ``chromium`` / ``chromedriver`` | browser binaries |
    | ``page_timeout_s`` | ``20`` | how long to wait for a page after a click |

    >>> import gymnasium, envhub
    >>> env = gymnasium.make("envhub/WebShopHTML-v0")  # doctest: +SKIP
    >>> obs, info = env.reset(options={"task_id": "0"})  # doctest: +SKIP

    ## Reference
    princeton-nlp/WebShop's ``WebAgentSiteEnv`` (Flask site + selenium), reimplemented on
    envhub's shop with local assets and Debian's Chromium.

    ## Version History
    * v0: initial release.
    """

    splits = ("train", "test")
    default_split = "train"

    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        human_goals: bool = False,
        goal_seed: int = WEBSHOP_SEED,
        show_attrs: bool = False,
        base_url: str | None = None,
        chromium: str = "chromium",
        chromedriver: str = "chromedriver",
        page_timeout_s: float = 20.0,
        shop: ShopData | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(render_mode=render_mode)
        self.shop = (
            shop if shop is not None else load_shop_data(data_dir, human_goals=human_goals, seed=goal_seed)
        )
        self._show_attrs = show_attrs
        self._base_url = base_url.rstrip("/") if base_url else None
        self._chromium, self._chromedriver = chromium, chromedriver
        self._timeout = page_timeout_s
        self._server: ShopServer | None = None
        self._driver: Any = None
        self._profile: str | None = None
        self._sid = ""
        self._page: dict[str, Any] = {}

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def driver(self) -> Any:
        """The selenium WebDriver (started on first use)."""
        if self._driver is None:
            self._profile = tempfile.mkdtemp(prefix="envhub-chromium-")
            self._driver = _start_browser(self._chromium, self._chromedriver, self._profile)
            self._driver.set_page_load_timeout(self._timeout)
        return self._driver

    @property
    def base_url(self) -> str:
        """The shop site's URL (a site is started on first use unless one was given)."""
        if self._base_url is None:
            self._server = ShopServer(self.shop, show_attrs=self._show_attrs)
            self._base_url = self._server.base_url
        return self._base_url

    def _close(self) -> None:
        if self._driver is not None:
            self._driver.quit()
            self._driver = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None
        if self._server is not None:
            self._server.close()
            self._server = None

    # -- hooks -----------------------------------------------------------------------------

    def _task_ids(self, split: str) -> Sequence[str]:
        return self.shop.splits[split]

    def has_task(self, task_id: str) -> bool:
        return task_id.isdigit() and str(int(task_id)) == task_id and int(task_id) < len(self.shop.goals)

    def _reset_task(self, task_id: str) -> Outcome:
        # A fresh site session per episode: the name only needs to be unique, not random-seeded.
        self._sid = f"env-{uuid.uuid4().hex[:12]}"
        self._instruction = self.shop.goals[int(task_id)].instruction_text
        self.driver.get(f"{self.base_url}/{self._sid}?task={task_id}")
        self._page = self._read_page()
        return self._outcome(valid=True)

    def _step(self, action: str) -> Outcome:
        name, arg = parse_action(action)
        arg = None if arg is None else arg.lower()
        if name == "search" and arg:
            self._search(arg)
            return self._outcome(valid=True)
        if name == "click" and arg is not None and arg in self._page["clickables"] and arg != "search":
            self._click(self._page["clickables"][arg])
            return self._outcome(valid=True)
        return self._outcome(valid=False)

    # -- browser ---------------------------------------------------------------------------

    def _read_page(self) -> dict[str, Any]:
        raw = self.driver.execute_script(_READ_PAGE_JS)
        clickables: dict[str, Any] = {}
        for key, element, is_radio in raw["entries"]:
            clickables[key] = (element, is_radio)  # later duplicates win, like WebShop's dict comprehension
        return {
            "texts": list(raw["texts"]),
            "clickables": clickables,
            "has_search_bar": bool(raw["has_search_bar"]),
            "page_id": raw["page_id"],
            "kind": raw["kind"] or "",
            "reward": json.loads(raw["reward"]) if raw["reward"] else None,
        }

    def _wait_for_new_page(self, old_id: str | None) -> None:
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            try:
                page_id = self.driver.execute_script(
                    "const m = document.querySelector('meta[name=\"page-id\"]'); "
                    'return document.readyState === "complete" && m ? m.content : null;'
                )
            except Exception:  # the document is being replaced; ask again
                page_id = None
            if page_id is not None and page_id != old_id:
                self._page = self._read_page()
                return
            time.sleep(0.005)
        raise ConfigurationError(
            f"The WebShop page did not load within {self._timeout} s.", url=self.driver.current_url
        )

    def _search(self, query: str) -> None:
        from selenium.webdriver.common.by import By

        old = self._page.get("page_id")
        if self._page["has_search_bar"]:
            box = self.driver.find_element(By.ID, "search_input")
            box.clear()
            box.send_keys(query)
            box.submit()
        else:
            self.driver.get(f"{self.base_url}/{self._sid}/search?q={quote(query)}")
        self._wait_for_new_page(old)

    def _click(self, target: tuple[Any, bool]) -> None:
        element, is_radio = target
        old = self._page.get("page_id")
        if is_radio:
            # Option radios are visually hidden behind their labels; click them as the label does.
            self.driver.execute_script("arguments[0].click();", element)
        else:
            element.click()
        self._wait_for_new_page(old)

    def screenshot_png(self) -> bytes:
        """A PNG screenshot of the current page."""
        return bytes(self.driver.get_screenshot_as_png())

    # -- outcome ---------------------------------------------------------------------------

    def _outcome(self, *, valid: bool) -> Outcome:
        page = self._page
        observation = join_texts(page["texts"])
        reward = page["reward"]
        score = float(reward["score"]) if reward else 0.0
        done = page["kind"] == "done"
        won = done and score == 1.0
        actions = ["search[<your query>]"] if page["has_search_bar"] else []
        extra: dict[str, Any] = {
            "available_actions": {
                "has_search_bar": page["has_search_bar"],
                "clickables": list(page["clickables"]),
            },
            "instruction": self._instruction,
            "page": page["kind"],
        }
        if reward:
            extra["reward_info"] = reward["info"]
            extra["purchased"] = {"asin": reward["asin"], "options": reward["options"]}
        return Outcome(
            observation=observation,
            anchor=clean_observation(observation, self._instruction),
            reward=WIN_REWARD if won else 0.0,
            terminated=done,
            won=won,
            task_score=score,
            is_action_valid=valid,
            admissible_actions=actions + [f"click[{c}]" for c in page["clickables"]],
            extra=extra,
        )
