"""Chinese for the domain's assumption notes and fit reasons (see zh.py): (pattern, template)."""

RULES: tuple[tuple[str, str], ...] = ()
