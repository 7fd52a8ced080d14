"""The public names of ``ccanalytics.plots``, written once (see ``__init__.py``)."""

from ._backtest import (
    backtest_tradeoff as backtest_tradeoff,
)
from ._cost import (
    cost_breakdown as cost_breakdown,
    cost_vs_utilization as cost_vs_utilization,
)
from ._heatmap import (
    gpu_heatmap as gpu_heatmap,
)
from ._rank import (
    utilization_by_rank as utilization_by_rank,
)
from ._spend import (
    spend_outlook as spend_outlook,
)
from ._style import (
    COLORS as COLORS,
    NoDataError as NoDataError,
)
from ._time import (
    idle_cost_by_day as idle_cost_by_day,
    rank_time_heatmap as rank_time_heatmap,
    utilization_over_time as utilization_over_time,
)
from ._waste import (
    waste_breakdown as waste_breakdown,
)
