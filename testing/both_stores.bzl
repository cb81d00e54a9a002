"""A test that runs against both stores (issue 22)."""

def both_stores_cc_test(name, deps = [], size = "small", **kwargs):
    """`name` on SQLite, and `name`_clickhouse on a real ClickHouse server.

    The second runs with MERIDIAN_TEST_STORE=clickhouse (testing/test_store.h
    gives its stores) and skips every test, saying why, where
    clickhouse-server is not installed. It is tagged "clickhouse":
    tests/clickhouse_current.sh runs those again on a current ClickHouse.
    """
    native.cc_test(name = name, deps = deps, size = size, **kwargs)
    native.cc_test(
        name = name + "_clickhouse",
        deps = deps + ["//testing:clickhouse_environment"],
        env = {"MERIDIAN_TEST_STORE": "clickhouse"},
        size = "medium",
        tags = kwargs.pop("tags", []) + ["clickhouse"],
        **kwargs
    )
