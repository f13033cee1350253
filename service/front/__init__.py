"""The front door: HTTP parsed by llhttp (httptools) in uvicorn's event loop, each request read
whole within its limits before a thread runs the app (protocol.py, door.py, limits.py), in a
gunicorn worker (worker.py)."""
