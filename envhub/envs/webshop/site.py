"""The shop as real HTML pages: a FastAPI app rendering Jinja2 templates, all assets local.

Every page is rendered from a :class:`~envhub.envs.webshop.shop.ShopSession`, the same state
machine the text env runs, so a browser sees the same strings, clickables and reward. The
templates show WebShop's visible strings in WebShop's order; the selenium env
(:mod:`envhub.envs.webshop.html_env`) reads them back from the DOM.

Routes (``sid`` is any session name; ``fixed_N`` means goal ``N``, WebShop's convention):

* ``GET /``: redirect to ``/fixed_0``;
* ``GET /{sid}?task=N``: (re)start the session at the search page (goal ``N`` if given);
* ``GET /{sid}/page``: the session's current page;
* ``GET /{sid}/search?q=...``, ``GET /{sid}/click?target=...``: act, then redirect (303)
  to ``/{sid}/page``, so reloading a page never repeats an action;
* ``/static/...``: the stylesheet, the option script and the product pictures.

Sessions live on ``app.state`` (at most ``max_sessions``, oldest dropped first).
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from envhub.envs.webshop.data import ShopData
from envhub.envs.webshop.search import PAGE_SIZE
from envhub.envs.webshop.shop import SUB_PAGES, ShopSession, options_json

__all__ = ["create_shop_app"]

_HERE = Path(__file__).parent
_FIXED = re.compile(r"^fixed_(\d+)$")


class _Sessions:
    """Shopping sessions by name, bounded, safe to use from the server's threads."""

    def __init__(self, shop: ShopData, *, show_attrs: bool, max_sessions: int) -> None:
        self._shop = shop
        self._show_attrs = show_attrs
        self._max = max_sessions
        self._items: OrderedDict[str, ShopSession] = OrderedDict()
        self._lock = threading.Lock()
        self._page_ids = 0

    def start(self, sid: str, task: int | None) -> ShopSession:
        if task is None:
            match = _FIXED.match(sid)
            # Like WebShop, a session that names no goal gets a weighted random one (seeded by its name).
            task = int(match.group(1)) if match else _weighted_goal(self._shop, sid)
        goal = self._shop.goals[task % len(self._shop.goals)]
        session = ShopSession(self._shop, goal, show_attrs=self._show_attrs)
        with self._lock:
            self._items[sid] = session
            self._items.move_to_end(sid)
            while len(self._items) > self._max:
                self._items.popitem(last=False)
        return session

    def get(self, sid: str) -> ShopSession:
        with self._lock:
            session = self._items.get(sid)
        return session if session is not None else self.start(sid, None)

    def next_page_id(self) -> int:
        with self._lock:
            self._page_ids += 1
            return self._page_ids


def _weighted_goal(shop: ShopData, sid: str) -> int:
    weights = [g.weight for g in shop.goals]
    return random.Random(sid).choices(range(len(weights)), weights=weights)[0]


def _context(sessions: _Sessions, sid: str, session: ShopSession) -> dict[str, Any]:
    st = session.state
    page_no = st.page or 1
    product = session.shop.products[st.asin] if st.asin else None
    shown = [session.shop.products[a] for a in st.results[(page_no - 1) * PAGE_SIZE : page_no * PAGE_SIZE]]
    context: dict[str, Any] = {
        "sid": sid,
        "page": session.page,
        "page_id": sessions.next_page_id(),
        "goal": session.goal,
        "state": st,
        "page_no": page_no,
        "total": len(st.results),
        "products": shown,
        "product": product,
        "sub_pages": SUB_PAGES[: 4 if session.show_attrs else 3],
        "options": st.options,
    }
    if product is not None and st.options:
        images = [product.option_to_image.get(v) for v in st.options.values()]
        context["image"] = next((i for i in images if i), product.main_image)
    elif product is not None:
        context["image"] = product.main_image
    if st.reward is not None:
        payload = {"score": st.reward.score, "info": st.reward.info, "asin": st.asin, "options": st.options}
        context["score_text"] = repr(float(st.reward.score))
        context["options_json"] = options_json(st.options)
        # Inside <script>, "</" would end the element; JSON allows "<\/".
        context["reward_json"] = json.dumps(payload).replace("</", "<\\/")
    return context


def create_shop_app(shop: ShopData, *, show_attrs: bool = False, max_sessions: int = 1024) -> FastAPI:
    """Build the shop site over ``shop``.

    Args:
        shop: the shared shop data (:func:`envhub.envs.webshop.data.load_shop_data`).
        show_attrs: offer the item's Attributes sub-page.
        max_sessions: sessions kept; the oldest is dropped beyond this.

    Returns:
        The FastAPI app (serve it with uvicorn).
    """
    app = FastAPI(title="envhub WebShop", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.sessions = _Sessions(shop, show_attrs=show_attrs, max_sessions=max_sessions)
    templates = Jinja2Templates(directory=str(_HERE / "templates"))
    app.mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static")

    def render(request: Request, sid: str, session: ShopSession) -> HTMLResponse:
        context = _context(request.app.state.sessions, sid, session)
        return templates.TemplateResponse(request, f"{session.page.kind}.html", context)

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse("/fixed_0", status_code=303)

    @app.get("/{sid}", response_class=HTMLResponse)
    def start(request: Request, sid: str, task: int | None = None) -> HTMLResponse:
        return render(request, sid, request.app.state.sessions.start(sid, task))

    @app.get("/{sid}/page", response_class=HTMLResponse)
    def page(request: Request, sid: str) -> HTMLResponse:
        return render(request, sid, request.app.state.sessions.get(sid))

    @app.get("/{sid}/search")
    def search(request: Request, sid: str, q: str = "") -> RedirectResponse:
        request.app.state.sessions.get(sid).act(f"search[{q}]")
        return RedirectResponse(f"/{sid}/page", status_code=303)

    @app.get("/{sid}/click")
    def click(request: Request, sid: str, target: str = "") -> RedirectResponse:
        request.app.state.sessions.get(sid).act(f"click[{target}]")
        return RedirectResponse(f"/{sid}/page", status_code=303)

    return app
