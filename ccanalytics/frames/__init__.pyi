"""The public names of ``ccanalytics.frames``, written once (see ``__init__.py``)."""

from ._build import (
    GPU_COLUMNS as GPU_COLUMNS,
    POD_COLUMNS as POD_COLUMNS,
    ColumnSpec as ColumnSpec,
    PodsInput as PodsInput,
    gpus_frame as gpus_frame,
    pods_frame as pods_frame,
)
from ._columns import (
    LOAD_COLUMNS as LOAD_COLUMNS,
)
from ._loader import (
    ClusterFrames as ClusterFrames,
    FleetLoad as FleetLoad,
    aload_cluster_pods as aload_cluster_pods,
    load_cluster_frames as load_cluster_frames,
    load_cluster_pods as load_cluster_pods,
    load_fleet as load_fleet,
)
