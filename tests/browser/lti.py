"""An LMS's side of an LTI 1.1 launch: the form a Canvas or Moodle course link posts, signed as OAuth 1.0a says.

Written here from RFC 5849 (HMAC-SHA1, the signature in the form body) rather than with the
authenticator's own library, so the hub's check is tested against an independent signer.
"""

import base64
import hashlib
import hmac
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from email.message import Message


def percent(text: str) -> str:
    """RFC 3986 percent-encoding: everything but ALPHA, DIGIT, '-', '.', '_' and '~'."""
    return urllib.parse.quote(text, safe="~")


def signed_launch(url: str, key: str, secret: str, params: dict[str, str]) -> dict[str, str]:
    """``params`` with the OAuth fields and their HMAC-SHA1 signature for a POST to ``url``."""
    oauth = {
        "oauth_consumer_key": key,
        "oauth_signature_method": "HMAC-SHA1",
        "oauth_timestamp": str(int(time.time())),
        "oauth_nonce": secrets.token_hex(16),
        "oauth_version": "1.0",
        "oauth_callback": "about:blank",
    }
    form = {**params, **oauth}
    normalized = "&".join(f"{k}={v}" for k, v in sorted((percent(k), percent(v)) for k, v in form.items()))
    base = "&".join(["POST", percent(url), percent(normalized)])
    digest = hmac.new(f"{percent(secret)}&".encode(), base.encode(), hashlib.sha1).digest()
    return {**form, "oauth_signature": base64.b64encode(digest).decode()}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs) -> None:
        return None


def post_launch(url: str, form: dict[str, str]) -> tuple[int, Message]:
    """POST the launch; the status and headers of the hub's answer (its redirect is not followed)."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(), method="POST")
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as answer:
        return answer.code, answer.headers
