"""The API's id parameter types (path, query, body field): database ids are positive int4, so larger numbers
are a 422 naming them."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import Field

MAX_ID = 2_147_483_647  # PostgreSQL integer

IdPath = Annotated[int, Path(ge=1, le=MAX_ID)]
IdQuery = Annotated[int | None, Query(ge=1, le=MAX_ID)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
