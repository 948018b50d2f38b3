"""What every registry router shares: the guards of reads and writes, and the fields a PATCH sent."""

from __future__ import annotations

from fastapi import Depends
from pydantic import BaseModel

from telemetria.auth.guard import require
from telemetria.auth.roles import Perm
from telemetria.registry import schemas
from telemetria.registry.errors import RegistryError

READ = Depends(require(Perm.READ))
WRITE = Depends(require(Perm.WRITE_REGISTRY))


def sent(patch: BaseModel) -> dict[str, object]:
    """The fields the PATCH body set (a null included); a 422 naming the field the body may not clear."""
    try:
        return schemas.changes(patch)
    except ValueError as e:
        raise RegistryError(str(e), str(e).split(":")[0]) from None
