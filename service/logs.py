"""Structured logs: one JSON object per line, for the app and for gunicorn alike."""

import json
import logging
import time

# Attributes every LogRecord has; anything else passed in `extra` becomes a JSON field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """time, level, logger, message, the request fields given in `extra`, and any exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


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
            },
        )
        return response
