"""Public path kept for ``from ccanalytics.models import Pod``: the models live in
:mod:`ccanalytics.api.models`."""

from ccanalytics.api.models import *  # noqa: F403
from ccanalytics.api.models import __all__ as __all__
