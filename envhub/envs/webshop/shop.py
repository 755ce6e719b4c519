"""The shop's state machine and its pages, in WebShop's text form.

A :class:`ShopSession` is one shopper on one goal. It reproduces WebShop's
``SimServer.receive`` transitions and, for each page, the strings WebShop's text mode shows
(the visible texts of its templates, stripped and joined with ``" [SEP] "``) and the
clickables it offers (buttons and product links by their lower-cased text, option radios by
value; ``get_available_actions``):

=============  ==========================================================================
page           visible strings (clickables marked *)
=============  ==========================================================================
search         WebShop, Instruction:, <goal>, Search*  (+ the search bar)
results        Instruction:, <goal>, Back to Search*, Page P (Total results: N),
               < Prev* (page > 1), Next >* (always), then per product: ASIN*, title, price
item           Instruction:, <goal>, Back to Search*, < Prev*, per option: name, values*;
               title, Price: $x, Rating: N.A., Description*, Features*, Reviews*,
               [Attributes* with show_attrs], Buy Now*
sub-page       Instruction:, <goal>, Back to Search*, < Prev*, then the description /
               bullet points / attributes, category, query, product category / (no reviews)
done           Thank you for shopping with us!, ..., the options JSON, ..., the score
=============  ==========================================================================

Transitions: ``search[...]`` works from any page (WebShop's text env does not check for the
search bar) and resets the chosen options; ``back to search`` restarts at the search page;
``next >`` / ``< prev`` move between result pages (``next >`` is offered even past the last
result, giving an empty page); ``< prev`` on an item returns to its results page, on a
sub-page to the item; a product link opens the item; an option value sets that option;
``buy now`` ends the episode with the reward.
Anything else (unknown text, ``click[search]``, a malformed action) changes nothing.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from envhub.envs.webshop.catalogue import Product
from envhub.envs.webshop.goals import Goal
from envhub.envs.webshop.reward import RewardResult
from envhub.envs.webshop.search import PAGE_SIZE

__all__ = [
    "BACK_TO_SEARCH",
    "BUY_NOW",
    "NEXT_PAGE",
    "PREV_PAGE",
    "SUB_PAGES",
    "ActionResult",
    "Page",
    "ShopSession",
    "ShopState",
    "join_texts",
    "options_json",
    "parse_action",
]

BUY_NOW = "Buy Now"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BACK_TO_SEARCH = "Back to Search"
#: Item sub-pages by button text; "Attributes" only exists with ``show_attrs``.
SUB_PAGES = ("Description", "Features", "Reviews", "Attributes")

_ACTION = re.compile(r"(.+)\[(.+)\]")


def parse_action(action: str) -> tuple[str, str | None]:
    """Split ``name[arg]`` the way WebShop does (``re.match(r'(.+)\\[(.+)\\]')``; no match -> no argument)."""
    match = _ACTION.match(action)
    if match is None:
        return action, None
    return match.group(1), match.group(2)


def join_texts(texts: list[str]) -> str:
    """WebShop's simple text observation: the visible strings, stripped, joined by ``" [SEP] "``.

    A whitespace-only string with a line break is dropped (BeautifulSoup reduces it to a
    bare newline, which WebShop skips); other whitespace-only strings stay as empty parts.
    Empty strings are not text nodes at all.
    """
    parts = [t.strip() for t in texts if t and not (t.isspace() and "\n" in t)]
    return " [SEP] ".join(parts)


@dataclass(frozen=True)
class Page:
    """One rendered page.

    Attributes:
        kind: ``search``, ``results``, ``item``, ``sub`` or ``done``.
        texts: the visible strings in document order.
        clickables: clickable text (as the agent writes it) -> ``(kind, target)``: ``("button", "")``,
            ``("product", asin)`` or ``("option", option name)``; in WebShop's order.
        has_search_bar: whether the page has the search input.
    """

    kind: str
    texts: tuple[str, ...]
    clickables: dict[str, tuple[str, str]]
    has_search_bar: bool = False

    @property
    def text(self) -> str:
        """The page as WebShop's text observation."""
        return join_texts(list(self.texts))

    def available_actions(self) -> dict[str, Any]:
        """WebShop's ``get_available_actions()``: ``{has_search_bar, clickables}``."""
        return {"has_search_bar": self.has_search_bar, "clickables": list(self.clickables)}


@dataclass
class ShopState:
    """Where a shopper is (the parts of WebShop's session and URL the pages depend on)."""

    view: str = "search"
    keywords: list[str] | None = None
    page: int | None = None
    asin: str | None = None
    sub_page: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    results: list[str] = field(default_factory=list)
    reward: RewardResult | None = None


@dataclass(frozen=True)
class ActionResult:
    """What one action did: whether WebShop acted on it, and whether it ended the episode."""

    valid: bool
    done: bool = False
    reward: RewardResult | None = None


class ShopSession:
    """One shopper working on one goal.

    Args:
        shop: the shared shop (products, prices, search index, reward); see
            :class:`envhub.envs.webshop.data.ShopData`.
        goal: the task.
        show_attrs: offer the item's ``Attributes`` sub-page (WebShop's ``show_attrs``).
    """

    def __init__(self, shop: Any, goal: Goal, *, show_attrs: bool = False) -> None:
        self._shop = shop
        self.goal = goal
        self.show_attrs = show_attrs
        self.state = ShopState()
        # Only WebShop's "<r>" (random products) search draws from it; seeded by the goal so a
        # task id always replays the same way.
        self._rng = random.Random(f"{goal.asin}|{goal.instruction_text}")
        self.page = self.render()

    @property
    def shop(self) -> Any:
        """The shared shop this session reads from."""
        return self._shop

    # -- actions ---------------------------------------------------------------------------

    def act(self, action: str) -> ActionResult:
        """Apply a WebShop action string; never raises."""
        name, arg = parse_action(action)
        arg = None if arg is None else arg.lower()
        if name == "search" and arg:
            self.search(arg.split(" "))
            return ActionResult(valid=True)
        if name == "click" and arg is not None and arg in self.page.clickables and arg != "search":
            return self.click(arg)
        return ActionResult(valid=False)

    def search(self, keywords: list[str], page: int = 1) -> None:
        """Show result page ``page`` for ``keywords`` (resets the chosen options)."""
        st = self.state
        st.view, st.keywords, st.page, st.asin, st.sub_page, st.options = (
            "results",
            keywords,
            page,
            None,
            None,
            {},
        )
        st.results = self._shop.find(keywords, self._rng)
        self.page = self.render()

    def click(self, name: str) -> ActionResult:
        """Click a clickable of the current page (``name`` lower-case, as listed)."""
        st = self.state
        if name == BUY_NOW.lower():
            if st.asin is None:  # unreachable through the listed clickables; kept defensive
                return ActionResult(valid=False)
            st.reward = self._shop.reward(st.asin, self.goal, st.options)
            st.view = "done"
            self.page = self.render()
            return ActionResult(valid=True, done=True, reward=st.reward)
        if name == BACK_TO_SEARCH.lower():
            self.state = ShopState()
        elif name == NEXT_PAGE.lower() and st.view == "results":
            self.search(st.keywords or [], (st.page or 1) + 1)
            return ActionResult(valid=True)
        elif name == PREV_PAGE.lower() and st.view == "results":
            self.search(st.keywords or [], (st.page or 1) - 1)
            return ActionResult(valid=True)
        elif name == PREV_PAGE.lower() and st.view == "sub":
            st.view, st.sub_page = "item", None
        elif name == PREV_PAGE.lower() and st.view == "item":
            # WebShop re-runs the search, which also clears the chosen options.
            self.search(st.keywords or [], st.page or 1)
            return ActionResult(valid=True)
        elif name in {s.lower() for s in SUB_PAGES}:
            st.view, st.sub_page = "sub", next(s for s in SUB_PAGES if s.lower() == name)
        else:
            kind, target = self.page.clickables[name]
            if kind == "option":
                st.options[target] = name
            else:  # a product link (its asin as the file spells it; WebShop upper-cases the click)
                st.asin = target
            st.view = "item"
        self.page = self.render()
        return ActionResult(valid=True)

    # -- pages -----------------------------------------------------------------------------

    def render(self) -> Page:
        """The page for the current state."""
        view = self.state.view
        if view == "results":
            return self._results_page()
        if view == "item":
            return self._item_page()
        if view == "sub":
            return self._sub_page()
        if view == "done":
            return self._done_page()
        texts = ("WebShop", "Instruction:", self.goal.instruction_text, "Search")
        return Page("search", texts, {"search": ("button", "")}, True)

    def _header(self) -> list[str]:
        return ["Instruction:", self.goal.instruction_text, BACK_TO_SEARCH]

    def _results_page(self) -> Page:
        st = self.state
        page = st.page or 1
        shown = st.results[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        texts = [*self._header(), f"Page {page} (Total results: {len(st.results)})"]
        buttons = [BACK_TO_SEARCH]
        if page > 1:
            texts.append(PREV_PAGE)
            buttons.append(PREV_PAGE)
        texts.append(NEXT_PAGE)
        buttons.append(NEXT_PAGE)
        clickables = {b.lower(): ("button", "") for b in buttons}
        for asin in shown:
            product: Product = self._shop.products[asin]
            texts += [asin, product.title, product.price_tag]
            clickables[asin.lower()] = ("product", asin)
        return Page("results", tuple(texts), clickables)

    def _item_page(self) -> Page:
        product: Product = self._shop.products[self.state.asin]
        texts = [*self._header(), PREV_PAGE]
        options: dict[str, tuple[str, str]] = {}
        for option_name, values in product.options.items():
            texts.append(option_name)
            for value in values:
                texts.append(value)
                # A value shared by two options maps to the last one, as in WebShop.
                options[value] = ("option", option_name)
        buttons = [BACK_TO_SEARCH, PREV_PAGE, *SUB_PAGES[: 4 if self.show_attrs else 3], BUY_NOW]
        texts += [product.title, f"Price: {product.price_tag}", f"Rating: {product.rating}", *buttons[2:]]
        clickables: dict[str, tuple[str, str]] = {b.lower(): ("button", "") for b in buttons}
        clickables.update(options)
        return Page("item", tuple(texts), clickables)

    def _sub_page(self) -> Page:
        product: Product = self._shop.products[self.state.asin]
        texts = [*self._header(), PREV_PAGE]
        sub = self.state.sub_page
        if sub == "Description":
            texts.append(product.description)
        elif sub == "Features":
            texts += list(product.bullet_points)
        elif sub == "Attributes":
            texts += [*product.attributes, product.category, product.query, product.product_category]
        return Page(
            "sub", tuple(texts), {BACK_TO_SEARCH.lower(): ("button", ""), PREV_PAGE.lower(): ("button", "")}
        )

    def _done_page(self) -> Page:
        st = self.state
        score = st.reward.score if st.reward else 0.0
        texts = [
            "Thank you for shopping with us!", "Your code:", "None", "(Paste it in your MTurk interface.)",
            "Purchased", "asin", str(st.asin), "options", options_json(st.options),
            "attrs", "None", "category", "None", "query", "None", "product category", "None",
            "Target", "asin", "options", "attrs", "price upper", "instuction text", "category",
            "product category", "query", "Goal", "None", "Reward", "Your score (min 0.0, max 1.0)",
            repr(float(score)), "Reward Details", "None",
        ]  # fmt: skip
        return Page("done", tuple(texts), {})


def options_json(options: dict[str, str]) -> str:
    """The chosen options as WebShop's done page prints them (Jinja's ``tojson``: sorted keys, HTML-safe)."""
    text = json.dumps(options, sort_keys=True)
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(raw, safe)
    return text
