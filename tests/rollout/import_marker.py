"""A module a hostile request names as an import path: importing it at all is the failure.

The security tests check ``sys.modules`` for it after the request.
"""


class Marker:
    """Any attribute; the import is what counts."""
