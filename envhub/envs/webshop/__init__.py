"""WebShop: envhub's reproduction of the WebShop shopping environment (text and HTML modes).

Import the modules you need (``envhub.envs.webshop.env``, ``.html_env``, ``.site``); this
package imports nothing heavy.
"""

from __future__ import annotations

__all__: list[str] = []
