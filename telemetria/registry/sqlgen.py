"""Static SQL for single-table inserts and partial updates, built once at import from constant column lists.

Column names come only from the constant tuples in `registry/queries.py`, never from requests;
values always travel as parameters.
"""

from __future__ import annotations


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """INSERT of `columns` ($1..$n) returning the new id."""
    params = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({params}) RETURNING id"


def patch_sql(table: str, columns: tuple[str, ...]) -> str:
    """UPDATE of row $1 where only the columns named in the text array $2 change ($3.. are the values)."""
    sets = ", ".join(
        f"{c} = CASE WHEN '{c}' = ANY($2::text[]) THEN ${i} ELSE {c} END" for i, c in enumerate(columns, start=3)
    )
    return f"UPDATE {table} SET {sets} WHERE id = $1 RETURNING id"
