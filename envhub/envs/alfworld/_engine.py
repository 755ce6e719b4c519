"""The one place envhub touches ALFWorld's and TextWorld's Python APIs.

Two facts about the installed ``alfworld`` 0.4.2 wheel shape this module (see
``shared/reference/envs_alfworld_webshop.md`` A4, A8):

* importing any ``alfworld`` module runs ``alfworld.info``, which *sets*
  ``os.environ["ALFWORLD_DATA"]`` to ``~/.cache/alfworld`` when it is unset. envhub decides
  between the user's data and its embedded games by whether that variable is set, so
  :func:`import_alfworld` undoes the side effect;
* TextWorld's in-process batch mode shares one wrapper instance between sub-envs and breaks,
  so every envhub env owns one ``PddlEnv`` wrapped in ALFWorld's ``AlfredDemangler`` and
  ``AlfredInfos`` (:func:`make_engine`). Each ``PddlEnv`` loads its own copy of Fast
  Downward's library, so engines in one process share no C state.

Most of a reset is Fast Downward's PDDL->SAS translation, which TextWorld runs twice per
``load`` and twice per ``reset`` (``bench/alfworld_engine.py`` profiles it). Its result is a pure
function of the domain and problem text and TextWorld only reads it, so
:func:`share_translations` memoizes it per process: the 8 members of a group on one game,
or a game reset again, translate once. The engines' game states stay separate.

Most of a step is TextWorld re-parsing, with tatsu, the same few grammar strings (command
templates, rule conditions) to phrase the feedback and every admissible command.
:func:`share_parses` memoizes those parses per process; each caller gets its own copy of a
parsed template (TextWorld writes into it while deriving text), and the parsed conditions,
which TextWorld only reads, are shared. Both caches are exact: the text the engine produces
is unchanged (``tests/envs/alfworld`` replays a recorded transcript), steps are ~4x faster.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from envhub.core.errors import DependencyMissingError

__all__ = [
    "alfworld_package_dir",
    "clear_shared_caches",
    "import_alfworld",
    "make_engine",
    "share_parses",
    "share_translations",
]

_ENV_VAR = "ALFWORLD_DATA"
#: Games whose translations are kept per process (a few MB each for realistic scenes).
TRANSLATION_CACHE_SIZE = 64
#: Distinct grammar strings kept parsed (templates and conditions are shared by all games).
PARSE_CACHE_SIZE = 4096


def alfworld_package_dir() -> Path:
    """The installed ``alfworld`` package directory, found without importing it.

    Raises:
        DependencyMissingError: ``alfworld`` is not installed.
    """
    spec = importlib.util.find_spec("alfworld")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyMissingError("alfworld", extra="alfworld")
    return Path(next(iter(spec.submodule_search_locations)))


def import_alfworld(module: str) -> Any:
    """Import ``module`` (an ``alfworld``/``textworld`` module) without its environment side effect.

    Args:
        module: dotted module name, e.g. ``"alfworld.gen.constants"``.

    Returns:
        The imported module.

    Raises:
        DependencyMissingError: the ``alfworld`` extra (or one of its parts) is not installed.
    """
    before = os.environ.get(_ENV_VAR)
    if before == "":
        # Set but empty means unset (compose passes `${ALFWORLD_DATA:-}`); alfworld.info would
        # otherwise try to create the directory ''.
        os.environ.pop(_ENV_VAR)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DependencyMissingError(exc.name or "alfworld", extra="alfworld") from exc
    finally:
        # alfworld.info writes the variable on first import; restore the user's view of it.
        if before is None:
            os.environ.pop(_ENV_VAR, None)
        else:
            os.environ[_ENV_VAR] = before


def share_translations() -> None:
    """Memoize ``fast_downward.pddl2sas`` for this process (idempotent; see the module docstring).

    Raises:
        DependencyMissingError: the ``alfworld`` extra is not installed.
    """
    fast_downward = import_alfworld("fast_downward")
    if getattr(fast_downward.pddl2sas, "envhub_shared", False):
        return
    memoized = functools.lru_cache(maxsize=TRANSLATION_CACHE_SIZE)(fast_downward.pddl2sas)
    memoized.envhub_shared = True  # type: ignore[attr-defined]
    # TextWorld looks the function up on the module at every call, so replacing the module
    # attribute is what makes PddlState use the shared translations.
    fast_downward.pddl2sas = memoized


def share_parses() -> None:
    """Memoize TextWorld's grammar parses for this process (idempotent; see the module docstring).

    Raises:
        DependencyMissingError: the ``alfworld`` extra is not installed.
    """
    textgen = import_alfworld("textworld.envs.pddl.textgen")
    logic = import_alfworld("textworld.logic")
    if not getattr(textgen._parse_and_convert, "envhub_shared", False):
        parse = functools.lru_cache(maxsize=PARSE_CACHE_SIZE)(textgen._parse_and_convert)

        @functools.wraps(textgen._parse_and_convert)
        def parse_copy(*args: Any, **kwargs: Any) -> Any:
            # derive() assigns each parsed symbol's context: never hand out the cached objects.
            return copy.deepcopy(parse(*args, **kwargs))

        parse_copy.envhub_shared = True  # type: ignore[attr-defined]
        parse_copy.cache_clear = parse.cache_clear  # type: ignore[attr-defined]
        textgen._parse_and_convert = parse_copy
    query = logic.Rule.__dict__["parse_conjunctive_query"].__func__
    if not getattr(query, "envhub_shared", False):
        shared_query = functools.lru_cache(maxsize=PARSE_CACHE_SIZE)(query)
        shared_query.envhub_shared = True  # type: ignore[attr-defined]
        logic.Rule.parse_conjunctive_query = classmethod(shared_query)  # type: ignore[arg-type]


def clear_shared_caches() -> None:
    """Empty the per-process translation and parse caches (benchmarks use it to time cold starts)."""
    fast_downward = import_alfworld("fast_downward")
    textgen = import_alfworld("textworld.envs.pddl.textgen")
    logic = import_alfworld("textworld.logic")
    for func in (fast_downward.pddl2sas, textgen._parse_and_convert, logic.Rule.parse_conjunctive_query):
        clear = getattr(func, "cache_clear", None)
        if clear is not None:
            clear()


def make_engine(*, planner: bool = False) -> Any:
    """One ALFWorld text engine: ``AlfredInfos(AlfredDemangler(PddlEnv(...)))``.

    Args:
        planner: also wrap in ``AlfredExpert`` with the Fast Downward planner, so
            ``reset()`` puts the planner's full plan in ``state["extra.expert_plan"]``
            (what ``alfworld-generate --expert_type planner`` stores as the walkthrough).

    Returns:
        A TextWorld environment with ``load(gamefile)``, ``reset()`` and ``step(cmd)``.

    Raises:
        DependencyMissingError: the ``alfworld`` extra is not installed.
    """
    textworld = import_alfworld("textworld")
    pddl = import_alfworld("textworld.envs")
    share_translations()
    share_parses()
    tw_env = import_alfworld("alfworld.agents.environment.alfred_tw_env")
    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    # shuffle=False: entity numbering ("cabinet 3") must not depend on a global RNG, or two
    # envs on one task would show different names.
    engine = tw_env.AlfredInfos(tw_env.AlfredDemangler(pddl.PddlEnv(infos), shuffle=False))
    if planner:
        engine = tw_env.AlfredExpert(engine, expert_type=tw_env.AlfredExpertType.PLANNER)
    return engine
