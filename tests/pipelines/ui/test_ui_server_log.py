"""A malformed HTTP request to `python -m pipelines ui` is answered 400 and is one console line, not a traceback."""

from __future__ import annotations

import socket

from ui_process import running_ui


def test_a_malformed_request_is_one_line_on_the_console(tmp_path):
    from ml_metadata import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = str(tmp_path / "metadata.sqlite")
    config.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READWRITE_OPENCREATE
    metadata_store.MetadataStore(config)
    answers = []
    with running_ui(str(tmp_path)) as ui:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", ui.port), timeout=60) as connection:
                connection.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n")
                answers.append(connection.recv(1024))
    output = ui.output

    assert all(answer.startswith(b"HTTP/1.0 400 Bad Request") for answer in answers), answers
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 3, output
    assert all(
        line.startswith("ui: Error handling request from 127.0.0.1: malformed HTTP request, answered 400 (")
        for line in lines
    )
