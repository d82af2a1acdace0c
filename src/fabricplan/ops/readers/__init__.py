"""Readers for real formats; each turns one input into ``fabricplan.ops.model`` objects.

Every reader raises :class:`fabricplan.errors.InputError` with a location (``file:line`` or
``file:$.json.path``) for unusable input and never lets a parser exception escape.
"""

from fabricplan.ops.readers.cabling import read_cabling
from fabricplan.ops.readers.mlnx_qos import parse_mlnx_qos
from fabricplan.ops.readers.nic import read_nic, read_nics
from fabricplan.ops.readers.sonic_config_db import read_config_db
from fabricplan.ops.readers.sysfs_dcqcn import parse_sysfs_dump, read_sysfs_tree

__all__ = [
    "parse_mlnx_qos",
    "parse_sysfs_dump",
    "read_cabling",
    "read_config_db",
    "read_nic",
    "read_nics",
    "read_sysfs_tree",
]
