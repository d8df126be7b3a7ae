"""The in-algorithm API client: thin HTTP calls to the algohost service with http.client.

Address: the api_address argument, else $ALGORITHMIA_API. When $ALGOHOST_API_SOCKET names a Unix
socket (the network of an isolated algorithm reaches nothing else), every request goes over it;
the address then only gives the Host header and a path prefix. Key: the api_key argument, else
$ALGORITHMIA_API_KEY read at each request: the runner sets it only while a call runs (algorithms
with pipeline_enabled), so a client made at import time, or kept from an earlier call, uses the
key of the call in progress.
"""

import json
import os

from .errors import ApiError, ApiKeyMissingError

# http.client, socket and urllib load on the first request: the harness imports this package
# before every algorithm, and most never call out.

DEFAULT_TIMEOUT = 300

_unix_connection_class = None


def _unix_connection(socket_path, host, timeout):
    """An http.client connection over a Unix stream socket."""
    global _unix_connection_class
    if _unix_connection_class is None:
        import http.client
        import socket

        class UnixHTTPConnection(http.client.HTTPConnection):
            def __init__(self, path, host, timeout):
                super(UnixHTTPConnection, self).__init__(host, timeout=timeout)
                self._socket_path = path

            def connect(self):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    if self.timeout is not None:
                        sock.settimeout(self.timeout)
                    sock.connect(self._socket_path)
                except Exception:
                    sock.close()
                    raise
                self.sock = sock

        _unix_connection_class = UnixHTTPConnection
    return _unix_connection_class(socket_path, host, timeout)


class HttpResponse(object):
    def __init__(self, status, headers, body):
        self.status_code = status
        self.headers = headers
        self.content = body

    @property
    def text(self):
        return self.content.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content.decode("utf-8"))

    def error_message(self):
        """The service's reason for a failure: X-Error-Message, else the JSON error's message."""
        header = self.headers.get("x-error-message")
        if header:
            return header
        try:
            body = self.json()
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(error, dict) and error.get("message"):
                return str(error["message"])
            if error:
                return str(error)
        except Exception:
            pass
        return "HTTP {}{}".format(self.status_code, ": " + self.text[:500] if self.content else "")


class Client(object):
    def __init__(self, api_key=None, api_address=None, ca_cert=None, bearer_token=None):
        # Only a key given here; otherwise the call's key is read at each request (see _auth_header).
        self.apiKey = api_key or None
        self.apiAddress = api_address or os.environ.get("ALGORITHMIA_API") or None
        self.socketPath = os.environ.get("ALGOHOST_API_SOCKET") or None
        self.bearerToken = bearer_token
        self.caCert = ca_cert

    # --- what algorithms use --------------------------------------------------------------------

    def algo(self, algoRef):
        from .algorithm import Algorithm

        return Algorithm(self, algoRef)

    def file(self, dataUrl):
        from .datafile import DataFile

        return DataFile(self, dataUrl)

    def dir(self, dataUrl):
        from .datadirectory import DataDirectory

        return DataDirectory(self, dataUrl)

    def report_insights(self, insights):
        """POST /v1/insights with [{"insight_key", "insight_value"}, ...] and no auth header.

        Only calls of a version with insights_enabled report (the runner sets
        $ALGOHOST_INSIGHTS_TOKEN while such a call runs); elsewhere this does nothing and returns
        None, so the same code runs whether or not the version has Insights on."""
        token = os.environ.get("ALGOHOST_INSIGHTS_TOKEN")
        if not token:
            return None
        body = [{"insight_key": k, "insight_value": v} for k, v in dict(insights).items()]
        response = self.request(
            "POST",
            "/v1/insights",
            body=json.dumps(body).encode("utf-8"),
            content_type="application/json",
            headers={"X-Algohost-Insights-Token": token},
            auth=False,
        )
        if response.status_code >= 300:
            raise ApiError(response.error_message())
        return response

    # --- HTTP -----------------------------------------------------------------------------------

    def _auth_header(self):
        key = self.apiKey or os.environ.get("ALGORITHMIA_API_KEY")
        if key:
            return "Simple " + key
        if self.bearerToken:
            return "Bearer " + self.bearerToken
        raise ApiKeyMissingError()

    def request(self, method, path, body=None, content_type=None, query=None, headers=None, auth=True, timeout=None):
        """One HTTP request to the service; returns an HttpResponse whatever its status."""
        import http.client
        from urllib.parse import urlencode, urlsplit

        all_headers = {"Accept-Encoding": "identity", "Connection": "close"}
        if auth:
            all_headers["Authorization"] = self._auth_header()
        if content_type:
            all_headers["Content-Type"] = content_type
        if headers:
            all_headers.update(headers)
        if not self.apiAddress and not self.socketPath:
            raise ApiError("no API address: ALGORITHMIA_API is not set")
        address = urlsplit(self.apiAddress or "http://localhost")
        target = address.path.rstrip("/") + path
        if query:
            target += "?" + urlencode([(k, _query_value(v)) for k, v in query.items() if v is not None])
        if timeout is None:
            timeout = DEFAULT_TIMEOUT + 60
        if self.socketPath:
            conn = _unix_connection(self.socketPath, address.netloc or "localhost", timeout)
        elif address.scheme == "https":
            import ssl

            context = ssl.create_default_context(cafile=self.caCert) if self.caCert else None
            conn = http.client.HTTPSConnection(address.netloc, timeout=timeout, context=context)
        else:
            conn = http.client.HTTPConnection(address.netloc, timeout=timeout)
        try:
            conn.request(method, target, body=body, headers=all_headers)
            res = conn.getresponse()
            data = res.read()
            return HttpResponse(res.status, {k.lower(): v for k, v in res.getheaders()}, data)
        finally:
            conn.close()


def _query_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def data_exists(client, url):
    """HEAD on a data path: True on 200, False on 404, DataApiError with the server's reason otherwise."""
    from .errors import DataApiError

    response = client.request("HEAD", url)
    if response.status_code == 200:
        return True
    if response.status_code == 404:
        return False
    raise DataApiError(response.error_message())


def data_path(dataUrl):
    """'data://owner/coll/f' (or 'owner/coll/f', '/owner/...') -> the quoted path under /v1/data/."""
    from urllib.parse import quote

    path = dataUrl
    if path.startswith("data://"):
        path = path[len("data://") :]
    path = path.strip("/")
    return "/v1/data/" + quote(path, safe="/.~-_*")
