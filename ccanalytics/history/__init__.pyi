"""The public names of ``ccanalytics.history``, written once (see ``__init__.py``)."""

from .alerts._alerts import (
    Snooze as Snooze,
    notify_on_change as notify_on_change,
    read_state as read_state,
    snooze as snooze,
    webhook_problem as webhook_problem,
)
from .alerts._check import (
    CheckResult as CheckResult,
    CheckRun as CheckRun,
    check as check,
    check_policy as check_policy,
    check_store as check_store,
)
from .alerts._judge import (
    Judgement as Judgement,
    PolicyReport as PolicyReport,
    judge_policy as judge_policy,
)
from .alerts._policy import (
    Policy as Policy,
    Rule as Rule,
    Threshold as Threshold,
    load_policy as load_policy,
    parse_policy as parse_policy,
)
from .alerts._textfile import (
    render_textfile as render_textfile,
    write_textfile as write_textfile,
)
from .collector._collect import (
    CLOCK_SKEW as CLOCK_SKEW,
    CollectResult as CollectResult,
    collect as collect,
)
from .collector._collector import (
    CollectorRun as CollectorRun,
    SnapshotOutcome as SnapshotOutcome,
    collect_every as collect_every,
)
from .collector._schedule import (
    budget_refusal as budget_refusal,
)
from .export._export import (
    EXPORT_FORMATS as EXPORT_FORMATS,
    ExportResult as ExportResult,
    export_showback as export_showback,
    write_showback as write_showback,
)
from .export._focus import (
    FOCUS_COLUMNS as FOCUS_COLUMNS,
    to_focus as to_focus,
)
from .queries._anomalies import (
    SPEND_ANOMALY_COLUMNS as SPEND_ANOMALY_COLUMNS,
)
from .queries._backtest import (
    BACKTEST_COLUMNS as BACKTEST_COLUMNS,
    IdleRule as IdleRule,
)
from .queries._dialects import (
    DIALECTS as DIALECTS,
    measures_sql as measures_sql,
)
from .queries._history import (
    History as History,
)
from .queries._showback import (
    SHOWBACK_COLUMNS as SHOWBACK_COLUMNS,
)
from .queries._spend import (
    PERIODS as PERIODS,
    SPEND_COLUMNS as SPEND_COLUMNS,
    period_bounds as period_bounds,
)
from .queries._teams import (
    UNALLOCATED as UNALLOCATED,
    TeamRule as TeamRule,
    Teams as Teams,
    load_teams as load_teams,
    parse_teams as parse_teams,
)
from .queries._window import (
    resolve_window as resolve_window,
)
from .store._maintenance import (
    CompactResult as CompactResult,
    StoreReport as StoreReport,
    compact as compact,
    verify as verify,
)
from .store._schema import (
    SCHEMA_VERSION as SCHEMA_VERSION,
)
