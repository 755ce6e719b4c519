"""Environment families (one subpackage each) and the catalogue that registers them."""

from envhub.envs.registry import EnvListing, get_spec, list_envs, make, register_all

__all__ = ["EnvListing", "get_spec", "list_envs", "make", "register_all"]
