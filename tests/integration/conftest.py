"""Engine fixtures for the integration tests: a throwaway Postgres server per installation."""

from __future__ import annotations

import pytest

from tests.support.pg import postgres_server_fixture

postgres_server = postgres_server_fixture()


@pytest.fixture(scope="class")
def postgres_database(postgres_server):
    """A factory: a fresh, empty database on the session's server, as dbt connection params."""

    def make(name: str) -> dict:
        params = postgres_server.params()
        conn = postgres_server.connect()
        conn.autocommit = True
        try:
            cur = conn.cursor()
            cur.execute(f'drop database if exists "{name}"')
            cur.execute(f'create database "{name}"')
        finally:
            conn.close()
        return {**params, "dbname": name}

    return make
