"""The pipe protocol of a runner (docs/compatibility.md section 4), shared by algohost's harness and by ADK.init().

One JSON request per line on the request channel (stdin), one JSON response per request on the
response FIFO, which is opened for the first response and kept open. Whatever the algorithm prints goes to
stdout/stderr, which the service captures as that call's output; a response never goes there.

Standard library only: this module is imported before the algorithm's own dependencies.
"""

import base64
import errno
import json
import os
import sys

SENTINEL = "PIPE_INIT_COMPLETE"
DEFAULT_ERROR_TYPE = "AlgorithmError"
LOADING_ERROR = "LoadingError"
INPUT_ERROR = "InputError"

_HERE = os.path.dirname(os.path.abspath(__file__))
# Frames of the harness (and of the import machinery and runpy it uses) are left off the top of
# stack traces, so that they start in the algorithm's code.
_HARNESS_DIR = os.path.dirname(os.path.dirname(_HERE)) + os.sep

# The request channel once the harness took it off fd 0 (see take_stdin); None = use sys.stdin.
_requests = None
# True once the harness owns the process: serving ends the process at EOF.
_under_harness = False
# Set when serving began (the sentinel is out): from then on the harness never serves again.
started = False
# (fd for stdout, fd for stderr, mark bytes) when the service asks for output marks
# (ALGOHOST_OUTPUT_MARK): private duplicates taken before user code runs, so a mark always reaches
# the service, even if the algorithm redirects or closes its own fds 1 and 2.
_marks = None
# The response FIFO once the first response opened it: two system calls fewer per call than
# opening and closing it for each one. Not inheritable (PEP 446): subprocesses never get it.
_response_fd = None


def fifo_path():
    """Where responses go: $ALGOHOST_RESPONSE_FIFO, else the historical /tmp/algoout."""
    return os.environ.get("ALGOHOST_RESPONSE_FIFO") or "/tmp/algoout"


def fifo_exists():
    return os.path.exists(fifo_path())


def take_stdin():
    """Moves the request channel off fd 0, so that user code (and its subprocesses) reading stdin
    see an empty /dev/null instead of swallowing the next requests. Also keeps private copies of
    stdout and stderr for the output marks."""
    global _requests, _under_harness, _marks
    fd = os.dup(0)  # not inheritable: subprocesses never see it
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    _requests = os.fdopen(fd, "rb")
    _under_harness = True
    # Taken out of the environment: the algorithm's subprocesses have no use for it.
    mark = os.environ.pop("ALGOHOST_OUTPUT_MARK", None)
    if mark:
        _marks = (os.dup(1), os.dup(2), mark.encode("ascii"))


def flush_output():
    """Pushes what the algorithm printed to the service before its response is written."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def print_sentinel():
    """Ends load-time output. Written to fd 1 itself, even if load() replaced sys.stdout."""
    global started
    started = True
    flush_output()
    _write_all(1, (SENTINEL + "\n").encode("ascii"))


def accepts_two(func):
    """Whether func can be called with two positional arguments."""
    import inspect

    try:
        inspect.signature(func).bind(None, None)
        return True
    except TypeError:
        return False
    except ValueError:  # no signature (some builtins): assume the usual apply(input)
        return False


def decode_input(request):
    """A request's data as apply() receives it: text -> str, binary -> bytes, json -> the value."""
    if not isinstance(request, dict):
        raise ProtocolInputError("a request must be a JSON object with content_type and data")
    content_type = request.get("content_type")
    data = request.get("data")
    if content_type == "json":
        return data
    if content_type == "text":
        if not isinstance(data, str):
            raise ProtocolInputError("text input must be a string")
        return data
    if content_type == "binary":
        if not isinstance(data, str):
            raise ProtocolInputError("binary input must be a base64 string")
        try:
            return base64.b64decode(data.encode("ascii"), validate=True)
        except Exception:
            raise ProtocolInputError("binary input is not valid base64")
    raise ProtocolInputError("unknown content_type {!r}: expected json, text or binary".format(content_type))


class ProtocolInputError(Exception):
    error_type = INPUT_ERROR


def result_response(result):
    """The response for apply's result: bytes -> binary (base64), str -> text, anything else -> json."""
    if isinstance(result, (bytes, bytearray, memoryview)):
        value, content_type = base64.b64encode(bytes(result)).decode("ascii"), "binary"
    elif isinstance(result, str):
        value, content_type = result, "text"
    else:
        value, content_type = result, "json"
    envelope = {"result": value, "metadata": {"content_type": content_type}}
    try:
        return _dumps(envelope)
    except (TypeError, ValueError, RecursionError, OverflowError) as err:
        return error_response(
            "the result of apply() cannot be sent as JSON: {}".format(err),
            DEFAULT_ERROR_TYPE,
            "",
        )


def exception_response(exc, error_type=None, message=None):
    """The response for an exception: its own string error_type if it carries one, else the default."""
    if error_type is None:
        own = getattr(exc, "error_type", None)
        error_type = own if isinstance(own, str) and own else DEFAULT_ERROR_TYPE
    if message is None:
        message = exception_message(exc)
    return error_response(message, error_type, format_traceback(exc))


def exception_message(exc):
    text = getattr(exc, "message", None)
    if not isinstance(text, str):
        try:
            text = str(exc)
        except Exception:
            text = ""
    return text or type(exc).__name__


def error_response(message, error_type, stacktrace):
    error = {"message": message, "error_type": error_type, "stacktrace": stacktrace, "stack_trace": stacktrace}
    return _dumps({"error": error})


def format_traceback(exc):
    """The exception's traceback without the harness's own frames on top."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_harness_frame(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:
        return ""


def _is_harness_frame(filename):
    return (
        filename.startswith(_HARNESS_DIR)
        or filename.startswith("<frozen importlib")
        or filename.endswith(os.path.join("importlib", "__init__.py"))
        or os.path.basename(filename) == "runpy.py"
        or filename == "<frozen runpy>"
    )


def _dumps(value):
    # ensure_ascii=False keeps the line as long as the UTF-8 text (the service measures output by it).
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_response(line, local_print=None):
    """Flushes the algorithm's output, then writes one response line to the FIFO (opened by the
    first response, then kept). With local_print (ADK local mode, no FIFO) the line is printed instead."""
    flush_output()
    if local_print is not None:
        local_print(line)
        return
    if _marks is not None:
        # This request's output ends here, on both streams; the service cuts them at the marks.
        _write_all(_marks[0], _marks[2])
        _write_all(_marks[1], _marks[2])
    # A lone surrogate can only sit inside a JSON string, where backslashreplace writes the same
    # \\udXXX escape the JSON encoder would have.
    data = (line + "\n").encode("utf-8", "backslashreplace")
    global _response_fd
    if _response_fd is None:
        _response_fd = os.open(fifo_path(), os.O_WRONLY)
    try:
        _write_all(_response_fd, data)
    except OSError as err:
        if err.errno != errno.EBADF:
            raise
        # The algorithm closed the harness's descriptor (os.closerange…): nothing of this
        # response was written, so it goes whole through the FIFO opened again.
        _response_fd = os.open(fifo_path(), os.O_WRONLY)
        _write_all(_response_fd, data)


def _request_lines():
    stream = _requests if _requests is not None else sys.stdin.buffer
    while True:
        line = stream.readline()
        if not line:
            return
        if line.strip():
            yield line


def handle(line, apply, load_result=None, two_args=False):
    """One request line -> one response line."""
    try:
        request = json.loads(line)
    except ValueError as err:
        return error_response("the request is not JSON: {}".format(err), INPUT_ERROR, "")
    try:
        data = decode_input(request)
    except ProtocolInputError as err:
        return error_response(str(err), INPUT_ERROR, "")
    # The service passes a key scoped to this call (pipeline_enabled algorithms only):
    # Algorithmia.client() reads it from the environment while the call runs.
    key = request.get("api_key") if isinstance(request, dict) else None
    previous = os.environ.get("ALGORITHMIA_API_KEY")
    if key:
        os.environ["ALGORITHMIA_API_KEY"] = key
    # An Event Flow's delivery says where its input came from (topic, partition, offset, key…):
    # ALGOHOST_EVENT holds it as JSON while the call runs, so the algorithm can be idempotent.
    event = request.get("event") if isinstance(request, dict) else None
    if isinstance(event, dict):
        os.environ["ALGOHOST_EVENT"] = json.dumps(event)
    # Versions with insights_enabled: the token client.report_insights() sends, only while the call runs.
    insights = request.get("insights_token") if isinstance(request, dict) else None
    if isinstance(insights, str) and insights:
        os.environ["ALGOHOST_INSIGHTS_TOKEN"] = insights
    try:
        result = apply(data, load_result) if two_args else apply(data)
    except Exception as err:  # SystemExit and KeyboardInterrupt end the runner: the call gets SystemExit
        return exception_response(err)
    finally:
        os.environ.pop("ALGOHOST_EVENT", None)
        os.environ.pop("ALGOHOST_INSIGHTS_TOKEN", None)
        if key:
            # The call's key must not outlive the call.
            if previous is None:
                os.environ.pop("ALGORITHMIA_API_KEY", None)
            else:
                os.environ["ALGORITHMIA_API_KEY"] = previous
    return result_response(result)


def serve(apply, load_result=None, loading_error=None, local_print=None):
    """Prints the sentinel, then answers every request until EOF.

    loading_error: a response line (from loading_response) that answers every request instead.
    Under the harness, EOF ends the process with status 0; otherwise serve() returns."""
    two_args = load_result is not None and accepts_two(apply)
    if local_print is None:
        print_sentinel()
    for line in _request_lines():
        if loading_error is not None:
            response = loading_error
        else:
            response = handle(line, apply, load_result, two_args)
        write_response(response, local_print)
    if _under_harness:
        # EOF: exit 0 now. A plain exit would wait for non-daemon threads the algorithm started.
        flush_output()
        os._exit(0)


def loading_response(exc, what):
    """The LoadingError response for a failure while importing or loading the algorithm."""
    message = "{} raised {}: {}".format(what, type(exc).__name__, exception_message(exc))
    stacktrace = format_traceback(exc)
    try:
        sys.stderr.write(stacktrace)
        sys.stderr.flush()
    except Exception:
        pass
    return error_response(message, LOADING_ERROR, stacktrace)


def loading_message_response(message):
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except Exception:
        pass
    return error_response(message, LOADING_ERROR, "")
