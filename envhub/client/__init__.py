"""Clients of an envhub env server: ``RemoteEnv`` and the sync/async API clients.

* :class:`RemoteEnv`: a ``gymnasium.Env`` over HTTP (also ``gymnasium.make("envhub/Remote-v0",
  base_url=...)``);
* :class:`RemoteVectorEnv`: a Gymnasium vector env of N sessions of one server, one batch
  request per step (also ``gymnasium.make_vec("envhub/Remote-v0", num_envs=N, base_url=...)``);
* :class:`EnvClient` and :class:`AsyncEnvClient`: the whole REST API (sessions, tasks,
  groups, batch step/reset, health) with the same methods, sync over httpx and async over
  :class:`Http1Transport` (a lean keep-alive HTTP/1.1 client, :mod:`envhub.client._http1`;
  aiohttp for ``https://``, see :mod:`envhub.client._transport`);
* :class:`RolloutClient` and :class:`AsyncRolloutClient`: the rollout service (submit, get,
  list, cancel, retry, wait);
* :class:`RetryPolicy`: backoff on ``503 CAPACITY_REACHED`` (honouring ``Retry-After``) and on
  connection errors, safe because steps and resets carry a ``request_id``.

Server errors come back as the same :mod:`envhub.core.errors` classes the server raised.
"""

from envhub.client._client import AsyncEnvClient, EnvClient
from envhub.client._http1 import Http1Transport
from envhub.client._protocol import ApiCall, Protocol, StepItem, new_request_id, slot_error
from envhub.client._remote_env import RemoteEnv
from envhub.client._remote_vector_env import RemoteVectorEnv
from envhub.client._retry import RetryPolicy
from envhub.client._rollout import AsyncRolloutClient, RolloutClient, RolloutJobTimeout
from envhub.client._transport import AiohttpTransport, AsyncTransport, HttpxAsyncTransport

__all__ = [
    "AiohttpTransport",
    "ApiCall",
    "AsyncEnvClient",
    "AsyncRolloutClient",
    "AsyncTransport",
    "EnvClient",
    "Http1Transport",
    "HttpxAsyncTransport",
    "Protocol",
    "RemoteEnv",
    "RemoteVectorEnv",
    "RetryPolicy",
    "RolloutClient",
    "RolloutJobTimeout",
    "StepItem",
    "new_request_id",
    "slot_error",
]
