"""client.algo("owner/name/version").pipe(input): POST /v1/algo/... (docs/compatibility.md section 2)."""

import json
import re
from enum import Enum

from .algo_response import AlgoResponse, AsyncResponse
from .errors import AlgorithmException, ApiError

OutputType = Enum("OutputType", "default raw void")

_ALGO_REF = re.compile(r"^(?:algo://|/)?(\w+/.+)$")


class Algorithm(object):
    def __init__(self, client, algoRef):
        match = _ALGO_REF.match(algoRef)
        if match is None:
            raise ValueError("Invalid algorithm URI: " + algoRef)
        self.client = client
        self.path = match.group(1).rstrip("/")
        parts = self.path.split("/")
        self.username = parts[0]
        self.algoname = parts[1]
        self.version = parts[2] if len(parts) > 2 else None
        self.url = "/v1/algo/" + self.path
        self.query_parameters = {}
        self.output_type = OutputType.default

    def set_options(self, timeout=300, stdout=False, output=OutputType.default, **query_parameters):
        self.query_parameters = {"timeout": timeout, "stdout": stdout}
        self.query_parameters.update(query_parameters)
        self.output_type = output
        return self

    def pipe(self, input1):
        """Calls the algorithm; returns an AlgoResponse (.result, .metadata), raises AlgorithmException."""
        query = dict(self.query_parameters)
        if self.output_type == OutputType.raw:
            query["output"] = "raw"
        elif self.output_type == OutputType.void:
            query["output"] = "void"
        body, content_type = _encode_input(input1)
        timeout = query.get("timeout") or 300
        try:
            timeout = float(timeout) + 60
        except (TypeError, ValueError):
            timeout = 360
        response = self.client.request("POST", self.url, body=body, content_type=content_type, query=query, timeout=timeout)
        if self.output_type == OutputType.raw:
            if response.status_code >= 300:
                raise ApiError(response.error_message())
            return response.text
        try:
            parsed = response.json()
        except ValueError:
            raise AlgorithmException(response.error_message())
        if not isinstance(parsed, dict):
            raise AlgorithmException("unexpected response from the service: " + response.text[:500])
        if response.status_code >= 300 and "error" not in parsed:
            raise AlgorithmException(response.error_message())
        if self.output_type == OutputType.void or parsed.get("async"):
            if "error" in parsed:
                raise ApiError(response.error_message())
            return AsyncResponse(parsed)
        return AlgoResponse.create_algo_response(parsed)


def _encode_input(value):
    """bytes -> octet-stream, str -> text/plain, anything else -> JSON (None included)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value), "application/octet-stream"
    if isinstance(value, str):
        return value.encode("utf-8"), "text/plain"
    return json.dumps(value).encode("utf-8"), "application/json"
