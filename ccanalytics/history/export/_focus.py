"""A showback frame as FOCUS 1.2: the FinOps Open Cost and Usage Specification's columns.

Every column FOCUS 1.2 makes mandatory for a cost and usage dataset is here, with the
recommended ``ChargeFrequency``, ``InvoiceId`` and ``ServiceSubcategory`` and the
resource and sub-account columns a per-pod charge has, all in alphabetical order; then
custom columns prefixed ``x_`` (the specification's rule for columns it does not
define), after every FOCUS column as it recommends.

What the values mean here (see :data:`FOCUS_COLUMNS`):

- the costs are **estimates from snapshots**, not an invoice: ``BilledCost``,
  ``EffectiveCost``, ``ListCost`` and ``ContractedCost`` are all the showback row's
  ``cost`` (Σ cost·Δt over the observed part of the charge period, at the per-hour price
  each listing showed; no discounts are known), and ``ChargeDescription`` and
  ``x_CostSource`` say so on every row;
- ``InvoiceId`` is empty (null): no invoice is associated with an estimate. (FOCUS's
  rules ``InvoiceId-C-004-C``, null without an invoice, and ``InvoiceId-C-005-C``, not
  null with one, cannot both pass on one row: a validator reports the second.)
- ``ChargePeriodStart``/``ChargePeriodEnd`` are the row's UTC hour or day clipped to the
  window; ``BillingPeriodStart``/``BillingPeriodEnd`` the calendar month (UTC) that
  holds the charge period's start;
- ``PricingQuantity`` is the hours observed in the charge period (``PricingUnit``
  ``Hours``), ``SubAccountId``/``SubAccountName`` the cluster, ``ResourceId`` and
  ``ResourceName`` the pod.

Costs are never rounded: any grouping of the rows sums to the store's other answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import pandas as pd

from ccanalytics.measures import waste_classes

__all__ = [
    "APPLICABILITY_CRITERIA",
    "COST_SOURCE",
    "FOCUS_COLUMNS",
    "FOCUS_VERSION",
    "PROVIDER",
    "to_focus",
]

#: The FOCUS version the columns follow.
FOCUS_VERSION: Final = "1.2"
#: The provider (and publisher, and invoice issuer) every row names.
PROVIDER: Final = "Cloud Compute"
#: How the costs were made, on every row (``x_CostSource``; ``ChargeDescription`` too).
COST_SOURCE: Final = "estimated from snapshots"

#: FOCUS's applicability criteria this export meets (a validator checks the rules that
#: depend on them): charges per provisioned resource (the pod) with a type, grouped in
#: sub-accounts (the cluster).
APPLICABILITY_CRITERIA: Final = (
    "BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED",
    "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED",
    "SUB_ACCOUNT_SUPPORTED",
)


def _custom(name: str) -> str:
    """A showback column as a custom FOCUS column: ``idle_gpus_cost`` -> ``x_IdleGpusCost``."""
    return "x_" + "".join(word.capitalize() for word in name.split("_"))


#: Each waste class's showback column -> its FOCUS column (``x_IdleEmptyCost``, ...).
_CLASS_COLUMNS: Final[Mapping[str, str]] = {m.name: _custom(m.name) for m in waste_classes()}

#: The columns of :func:`to_focus`, in order: name -> what it holds here.
FOCUS_COLUMNS: Final[Mapping[str, str]] = {
    "BilledCost": "the estimated cost, USD (showback's cost)",
    "BillingAccountId": "the account given to to_focus (default 'default')",
    "BillingAccountName": "the same account",
    "BillingCurrency": "USD",
    "BillingPeriodEnd": "end (exclusive) of the UTC calendar month holding the charge period",
    "BillingPeriodStart": "start of that month",
    "ChargeCategory": "Usage",
    "ChargeClass": "null: no row corrects an earlier one",
    "ChargeDescription": "what the row is, and that its cost is an estimate from snapshots",
    "ChargeFrequency": "Usage-Based",
    "ChargePeriodEnd": "end (exclusive) of the UTC hour or day, clipped to the window",
    "ChargePeriodStart": "start of the UTC hour or day, clipped to the window",
    "ContractedCost": "the estimated cost (no contract price is known)",
    "EffectiveCost": "the estimated cost",
    "InvoiceId": "null: an estimate has no invoice",
    "InvoiceIssuerName": PROVIDER,
    "ListCost": "the estimated cost (at the per-hour price each listing showed)",
    "PricingQuantity": "hours of the charge period the pod was observed",
    "PricingUnit": "Hours",
    "ProviderName": PROVIDER,
    "PublisherName": PROVIDER,
    "ResourceId": "the pod's id",
    "ResourceName": "the pod's name",
    "ResourceType": "GPU Pod, or Pod for a pod without GPUs",
    "ServiceCategory": "Compute",
    "ServiceName": "Pods",
    "ServiceSubcategory": "Containers",
    "SubAccountId": "the cluster's id",
    "SubAccountName": "the cluster's id",
    "x_Team": "the team (the mapping's first matching rule, else 'unallocated')",
    "x_ClusterId": "the cluster's id",
    "x_GpuType": "GPU type, as last seen in the charge period",
    "x_GpuCount": "GPUs, as last seen in the charge period",
    "x_GpuUtilizationMean": "percent: mean GPU utilization over the charge period",
    "x_IdleCost": "USD of the cost while the pod was idle (x_IdleEmptyCost + x_IdleLoadedCost)",
    "x_UnusedCost": "USD: Σ cost·(1 − gpu_util_mean/100)·Δt",
    "x_IdleHours": "hours the pod was idle",
    **{
        _CLASS_COLUMNS[m.name]: f"USD of waste class {m.name}: {m.label} (History.showback's)"
        for m in waste_classes()
    },
    "x_WasteCost": "USD: the sum of the waste classes (History.showback's waste_cost)",
    "x_WasteClass": "the class holding the most of the row's waste USD, 'none' or "
    "'unjudged' (History.showback's waste_class)",
    "x_CostSource": COST_SOURCE,
}


def to_focus(
    showback: pd.DataFrame, *, account: str = "default", currency: str = "USD"
) -> pd.DataFrame:
    """A frame of :meth:`History.showback <ccanalytics.history.History.showback>` rows as
    FOCUS 1.2 columns (:data:`FOCUS_COLUMNS`), one row each, costs unrounded.

    ``account`` names the billing account (``BillingAccountId`` and ``Name``);
    ``currency`` is the pods' ``cost`` currency (ISO 4217; the service prices in USD).
    """
    rows = showback.reset_index(drop=True)
    start = rows["period_start"]
    month = start.dt.tz_localize(None).dt.to_period("M")
    cost = rows["cost"].astype("float64")
    gpus = rows["gpu_count"].astype("Int64")
    has_gpus = gpus.fillna(0) > 0
    what = pd.Series("Pod", index=rows.index, dtype="string").where(~has_gpus, "GPU Pod")
    described = (
        what
        + " "
        + rows["name"].astype("string").fillna(rows["pod_id"].astype("string")).fillna("")
        + " in cluster "
        + rows["cluster_id"].astype("string").fillna("")
        + f": cost {COST_SOURCE} (the listed per-hour price over the observed time); "
        "not an invoice"
    )
    columns: dict[str, object] = {
        "BilledCost": cost,
        "BillingAccountId": account,
        "BillingAccountName": account,
        "BillingCurrency": currency,
        "BillingPeriodEnd": (month + 1).dt.to_timestamp().dt.tz_localize("UTC"),
        "BillingPeriodStart": month.dt.to_timestamp().dt.tz_localize("UTC"),
        "ChargeCategory": "Usage",
        "ChargeClass": pd.Series(pd.NA, index=rows.index, dtype="string"),
        "ChargeDescription": described,
        "ChargeFrequency": "Usage-Based",
        "ChargePeriodEnd": rows["period_end"],
        "ChargePeriodStart": start,
        "ContractedCost": cost,
        "EffectiveCost": cost,
        "InvoiceId": pd.Series(pd.NA, index=rows.index, dtype="string"),
        "InvoiceIssuerName": PROVIDER,
        "ListCost": cost,
        "PricingQuantity": rows["observed_hours"].astype("float64"),
        "PricingUnit": "Hours",
        "ProviderName": PROVIDER,
        "PublisherName": PROVIDER,
        "ResourceId": rows["pod_id"],
        "ResourceName": rows["name"],
        "ResourceType": what,
        "ServiceCategory": "Compute",
        "ServiceName": "Pods",
        "ServiceSubcategory": "Containers",
        "SubAccountId": rows["cluster_id"],
        "SubAccountName": rows["cluster_id"],
        "x_Team": rows["team"],
        "x_ClusterId": rows["cluster_id"],
        "x_GpuType": rows["gpu_type"],
        "x_GpuCount": gpus,
        "x_GpuUtilizationMean": rows["gpu_util_mean"].astype("Float64"),
        "x_IdleCost": rows["idle_cost"].astype("float64"),
        "x_UnusedCost": rows["unused_cost"].astype("float64"),
        "x_IdleHours": rows["idle_hours"].astype("float64"),
        **{column: rows[name].astype("float64") for name, column in _CLASS_COLUMNS.items()},
        "x_WasteCost": rows["waste_cost"].astype("float64"),
        "x_WasteClass": rows["waste_class"],
        "x_CostSource": COST_SOURCE,
    }
    frame = pd.DataFrame(columns, index=rows.index)
    strings = [c for c, v in columns.items() if isinstance(v, str)]
    frame[strings] = frame[strings].astype("string")
    return frame[list(FOCUS_COLUMNS)]
