"""One router per resource; :func:`envhub.server.app.create_app` composes them."""

from envhub.server.routes.batch import router as batch_router
from envhub.server.routes.groups import router as groups_router
from envhub.server.routes.ops import router as ops_router
from envhub.server.routes.sessions import router as sessions_router
from envhub.server.routes.tasks import router as tasks_router

__all__ = ["batch_router", "groups_router", "ops_router", "sessions_router", "tasks_router"]
