"""Adapters that plug envhub's envs into other RL frameworks.

Each adapter lives in its own module and imports its framework only when used, so importing
``envhub.integrations`` needs nothing beyond envhub:

* :mod:`envhub.integrations.skyrl`: a SkyRL ``BaseTextEnv`` over any envhub env (in process or
  over HTTP) and :func:`~envhub.integrations.skyrl.register_envhub_envs` (extra ``skyrl``);
* :mod:`envhub.integrations.verl`: a verl 0.9 ``AgentLoopBase`` playing one envhub episode per
  sample (extra ``verl``, in its own virtualenv: verl pins transformers<5.11);
* :mod:`envhub.integrations.verl_agent`: a verl-agent environment manager whose envs are
  sessions of an envhub server (no extra: verl-agent is not on PyPI; numpy only);
* :mod:`envhub.integrations.trl`: TRL's ``GRPOTrainer`` hooks, a ``rollout_func`` that plays
  multi-turn episodes and a Search-QA ``environment_factory`` (extra ``trl``);
* Gymnasium's vector API needs no adapter: ``gymnasium.make_vec("envhub/<Name>-v0", N)``
  works for every env, and ``make_vec("envhub/Remote-v0", N, base_url=...)`` builds
  :class:`envhub.client.RemoteVectorEnv`.
"""

__all__: list[str] = []
