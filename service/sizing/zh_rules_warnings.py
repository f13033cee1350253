"""Chinese for the domain's warnings and recommendation reasons (see zh.py): (pattern, template)."""

RULES: tuple[tuple[str, str], ...] = ()
