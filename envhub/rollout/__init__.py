"""Rollouts: run policies through envs and record Trajectory/Group records."""

from envhub.rollout.episode import json_safe_info, run_episode, run_group

__all__ = ["json_safe_info", "run_episode", "run_group"]
