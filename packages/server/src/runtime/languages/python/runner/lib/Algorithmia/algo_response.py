"""What pipe() returns: the result (binary results decoded from base64) and the call's metadata."""

import base64

from .errors import raiseAlgoApiError, AlgorithmException


class AlgoResponse(object):
    def __init__(self, result, metadata):
        self.result = result
        self.metadata = metadata

    def __repr__(self):
        return "AlgoResponse(result=%r,metadata=%r)" % (self.result, self.metadata)

    @staticmethod
    def create_algo_response(response):
        if "error" in response:
            raiseAlgoApiError(response)
        if "metadata" not in response or not isinstance(response["metadata"], dict):
            raise AlgorithmException("the service's response has no metadata")
        metadata = Metadata(response["metadata"])
        if metadata.content_type == "binary":
            return AlgoResponse(base64.b64decode(response["result"]), metadata)
        if metadata.content_type == "void":
            return AlgoResponse(None, metadata)
        return AlgoResponse(response.get("result"), metadata)


class Metadata(object):
    def __init__(self, metadata):
        self.content_type = metadata.get("content_type")
        self.duration = metadata.get("duration")
        self.stdout = metadata.get("stdout")
        self.full_metadata = metadata

    def __getitem__(self, key):
        return self.full_metadata[key] if key in self.full_metadata else self.__dict__[key]

    def __repr__(self):
        return "Metadata(content_type=%r,duration=%r,stdout=%r)" % (self.content_type, self.duration, self.stdout)


class AsyncResponse(object):
    """The answer to output=void: {"async": true, "request_id": ...}."""

    def __init__(self, response):
        self.async_protocol = response.get("async")
        self.request_id = response.get("request_id")
        self.full_response = response

    def __repr__(self):
        return "AsyncResponse(request_id=%r)" % (self.request_id,)
