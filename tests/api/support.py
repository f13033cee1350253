"""What the API tests share: a POST that must answer 200, and the answer's JSON."""


def ok(response):
    """The JSON of a 200 answer; the body of anything else as the failure message."""
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def post(client, path, body):
    return ok(client.post(path, json=body))


def texts(messages) -> list[str]:
    """The text of each coded message ({code, message, params}) of an answer's list."""
    return [m["message"] for m in messages]


def codes(messages) -> list[str]:
    """The code of each coded message of an answer's list."""
    return [m["code"] for m in messages]
