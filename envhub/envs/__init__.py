"""Environment families (one subpackage each) and the catalogue that registers them."""

from envhub.envs.registry import EnvListing, list_envs, make, register_all, resolve, resolve_all, specs

__all__ = ["EnvListing", "list_envs", "make", "register_all", "resolve", "resolve_all", "specs"]
