"""ProtoQA and CFC for Hugging Face ``datasets``: a builder, a Parquet export that stock ``load_dataset`` reads,
and an upload helper (docs/datasets.md).

>>> from protoqa_dataset import load_protoqa  # doctest: +SKIP
>>> load_protoqa("cfc", data_dir="../shared/data")["validation"].num_rows  # doctest: +SKIP
54
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from protoqa_core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from protoqa_core.io.data import (
        DATA_DIR_ENV,
        SourceDownloadError,
        SourceError,
        SourceNotFoundError,
        SourceVerificationError,
    )

    from .builder import ProtoQA, ProtoQAConfig, load_protoqa
    from .export import ExportReport, export_dataset
    from .schema import FEATURES
    from .sources import CONFIG_NAMES, SOURCES
    from .upload import UploadPlan, plan_upload, upload_export

__all__ = [
    "ProtoQA",
    "ProtoQAConfig",
    "load_protoqa",
    "ExportReport",
    "export_dataset",
    "FEATURES",
    "CONFIG_NAMES",
    "DATA_DIR_ENV",
    "SOURCES",
    "SourceError",
    "SourceNotFoundError",
    "SourceDownloadError",
    "SourceVerificationError",
    "UploadPlan",
    "plan_upload",
    "upload_export",
]

# Each name is imported from its module when first read: ``datasets`` (which the builder, the
# schema and the export need) loads only for them, not for the question parsing or the sources.
__getattr__ = lazy_exports(sys.modules[__name__])
