"""The sizing domain: pure functions over frozen dataclasses, SI units inside.

Nothing here imports Flask, marshmallow or prometheus, and nothing does network or
file I/O except reading the packaged catalog data once (catalog.py).
"""
