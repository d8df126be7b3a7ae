"""Exceptions of the in-algorithm client, named as in the Algorithmia Python client."""


class ApiError(Exception):
    """A failure reported by the algohost API."""


class ApiInternalError(ApiError):
    """A server error (5xx)."""


class DataApiError(ApiError):
    """A failure of the data API (/v1/data)."""


class AlgorithmException(ApiError):
    """An algorithm failed; raise it (or any exception with a string `error_type`) to choose the
    error type the caller sees, e.g. AlgorithmException("bad input", error_type="InputError")."""

    def __init__(self, message, stack_trace=None, error_type=None):
        super(AlgorithmException, self).__init__(message)
        self.message = message
        self.stack_trace = stack_trace
        self.error_type = error_type

    def __str__(self):
        return str(self.message)


class ApiKeyMissingError(AlgorithmException, DataApiError):
    """The algorithm has no API key: the service gives one only to algorithms with pipeline_enabled."""

    def __init__(self, message=None):
        super(ApiKeyMissingError, self).__init__(
            message
            or (
                "no API key: calling other algorithms and hosted data from an algorithm needs "
                "pipeline_enabled in the algorithm's settings (ALGORITHMIA_API_KEY is not set)"
            )
        )


def raiseAlgoApiError(result):
    """Raises AlgorithmException for a response body holding an `error`."""
    error = result.get("error") if isinstance(result, dict) else None
    if error is None:
        return
    if isinstance(error, dict):
        raise AlgorithmException(
            error.get("message", str(error)),
            stack_trace=error.get("stacktrace", error.get("stack_trace")),
        )
    raise AlgorithmException(str(error))


def raiseDataApiError(result):
    """Raises DataApiError for a response body holding an `error`."""
    error = result.get("error") if isinstance(result, dict) else None
    if error is None:
        return
    if isinstance(error, dict) and "message" in error:
        raise DataApiError(error["message"])
    raise DataApiError(str(error))
