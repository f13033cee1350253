"""The HTTP layer: schemas, problem+json errors, strict JSON, and one blueprint per resource."""
