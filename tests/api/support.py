"""What the API tests share: a POST that must answer 200, and the answer's JSON."""

import json


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


def answer_of(result):
    """The answer a result carries once: structuredContent (--structured), else its texts: the
    summary (a problem's lead), then the rest of the answer as JSON."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [part.text for part in result.content]
    rest = json.loads(texts[-1]) if texts[-1].startswith(("{", "[")) else {}
    return rest if result.is_error or len(texts) == 1 and rest else {"summary": texts[0], **rest}
