"""What the API tests share: a POST that must answer 200, and the answer's JSON."""


def ok(response):
    """The JSON of a 200 answer; the body of anything else as the failure message."""
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def post(client, path, body):
    return ok(client.post(path, json=body))
