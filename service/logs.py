"""Structured logs: one JSON object per line, for the app and for gunicorn alike."""

import logging
import time

from pythonjsonlogger import json


class JsonFormatter(json.JsonFormatter):
    """python-json-logger's formatter with our field names: time (UTC, milliseconds), level
    (lower case), logger, message, the request fields given in `extra`, and any exception."""

    def __init__(self) -> None:
        super().__init__("{asctime}{levelname}{name}{message}", style="{", json_ensure_ascii=False,
                         rename_fields={"asctime": "time", "levelname": "level", "name": "logger",
                                        "exc_info": "exception"})

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"

    def process_log_record(self, log_record: dict) -> dict:
        log_record["level"] = log_record["level"].lower()
        log_record.pop("color_message", None)  # uvicorn's copy of the message for a terminal
        return log_record


def logging_config(level: str = "INFO") -> dict:
    """A dictConfig that sends the app's and gunicorn's logs to stderr as JSON lines."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.logs.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": {
            "gunicorn.error": {"handlers": ["stderr"], "level": level, "propagate": False},
            "gunicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        },
    }


def init_access_log(app) -> None:
    """One JSON line per request on the `sizing.access` logger (gunicorn's own access log is off)."""
    from flask import g, request

    from .security import request_id

    access = logging.getLogger("sizing.access")

    @app.after_request
    def log_request(response):
        started = g.get("started")
        access.info(
            "%s %s %s", request.method, request.path, response.status_code,
            extra={
                "request_id": request_id(),
                "method": request.method,
                "path": request.path,
                "route": request.url_rule.rule if request.url_rule is not None else None,
                "status": response.status_code,
                "duration_ms": None if started is None else round((time.perf_counter() - started) * 1e3, 3),
                "remote_addr": request.remote_addr,
                "key_id": g.get("key_id"),
            },
        )
        return response
