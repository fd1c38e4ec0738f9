"""``sqlext serve`` without a JVM: confs, the JDBC URL, port checks and the command line."""

from __future__ import annotations

import socket

import pytest

from sqlext import shell
from sqlext.errors import SqlError
from sqlext.serve import (
    ServeError,
    build_arg_parser,
    hiveconf_settings,
    jdbc_url,
    main,
    ready_line,
    server_conf,
    wait_for_port,
)


def test_jdbc_url() -> None:
    assert jdbc_url("127.0.0.1", 10000) == "jdbc:hive2://127.0.0.1:10000/default"
    assert jdbc_url("h", 1, "db") == "jdbc:hive2://h:1/db"


def test_hiveconf_reaches_the_hadoop_configuration() -> None:
    # Only spark.* keys: spark-submit (which PySpark starts with every builder conf) warns "Ignoring
    # non-Spark config property" for any other key.
    settings = hiveconf_settings([("hive.metastore.uris", "thrift://h:9083"), ("spark.x", "1")])
    assert settings == {"spark.hadoop.hive.metastore.uris": "thrift://h:9083", "spark.x": "1"}


def test_server_conf_sets_single_session_port_and_host_last() -> None:
    conf = server_conf("0.0.0.0", 10001, {"hive.server2.thrift.port": "1", "k": "v"},
                       [("hive.metastore.uris", "thrift://h:9083")])
    assert conf["spark.sql.hive.thriftServer.singleSession"] == "true"
    assert conf["spark.hadoop.hive.server2.thrift.port"] == "10001"
    assert conf["spark.hadoop.hive.server2.thrift.bind.host"] == "0.0.0.0"
    assert "hive.server2.thrift.port" not in conf and "hive.metastore.uris" not in conf
    assert conf["spark.hadoop.hive.metastore.uris"] == "thrift://h:9083"
    assert conf["k"] == "v"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    assert server_conf("h", 1, {"spark.ui.showConsoleProgress": "true"})["spark.ui.showConsoleProgress"] == "true"


@pytest.mark.parametrize("port", [0, -1, 65536])
def test_bad_port(port: int) -> None:
    with pytest.raises(ServeError, match="port must be between"):
        server_conf("127.0.0.1", port)
    assert issubclass(ServeError, SqlError)


def test_wait_for_port() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert wait_for_port("127.0.0.1", port, timeout_s=5) >= 0
        assert wait_for_port("0.0.0.0", port, timeout_s=5) >= 0
    with pytest.raises(ServeError, match="did not accept connections within 0 s"):
        wait_for_port("127.0.0.1", port, timeout_s=0)
    with pytest.raises(ServeError, match="failed to start: died"):
        wait_for_port("127.0.0.1", port, timeout_s=5, failed=lambda: "died")


def test_arg_parser_defaults_and_repeatable_options() -> None:
    args = build_arg_parser().parse_args(["--conf", "a=1", "--conf", "b=2", "--hiveconf", "hive.x=y"])
    assert (args.port, args.host, args.warehouse, args.master) == (10000, "127.0.0.1", None, None)
    assert args.conf == [("a", "1"), ("b", "2")] and args.hiveconf == [("hive.x", "y")]


def test_bad_command_line_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--conf", "novalue"]) == 2
    assert "expected key=value" in capsys.readouterr().err


def test_busy_port_fails_before_starting_a_session(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert shell.main(["serve", "--port", str(port)]) == 1
    assert f"port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err


def test_shell_dispatches_serve(capsys: pytest.CaptureFixture[str]) -> None:
    assert shell.main(["serve", "--port", "0"]) == 1
    assert "port must be between 1 and 65535" in capsys.readouterr().err


def test_the_ready_line_names_the_pid_and_the_start_up_time() -> None:
    assert ready_line("jdbc:hive2://127.0.0.1:10000/default", 4242, 21.34) == (
        "JDBC server ready: jdbc:hive2://127.0.0.1:10000/default (pid 4242, started in 21.3 s)\n")
