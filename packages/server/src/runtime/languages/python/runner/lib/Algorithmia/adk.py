"""ADK: `from Algorithmia import ADK; ADK(apply, load).init()` serves the runtime protocol.

Under algohost's harness (an empty `.adk` file at the algorithm's root) `src/<Name>.py` runs as
the main program and init() serves calls until the service closes stdin. When the response FIFO
does not exist (running the file on a laptop), init(sample_input) loads, runs apply once and
prints the response; init() with no sample input answers request lines from stdin on stdout.
"""

from . import _pipe


class ADK(object):
    def __init__(self, apply_func, load_func=None, client=None):
        if not callable(apply_func):
            raise TypeError("ADK needs an apply function: ADK(apply, load)")
        if load_func is not None and not callable(load_func):
            raise TypeError("ADK's load must be a function or None")
        self.apply_func = apply_func
        self.load_func = load_func
        self.client = client
        self.is_local = not _pipe.fifo_exists()
        self.load_result = None
        self.loading_exception = None

    def load(self):
        """Runs load_func once; a failure is kept and answered as LoadingError."""
        try:
            if self.load_func is not None:
                self.load_result = self.load_func()
        except Exception as err:
            self.loading_exception = err
        return self.load_result

    def init(self, local_payload=None, pprint=print):
        self.load()
        if self.is_local:
            return self._run_local(local_payload, pprint)
        loading_error = None
        if self.loading_exception is not None:
            loading_error = _pipe.loading_response(self.loading_exception, "load()")
        _pipe.serve(self.apply_func, self.load_result, loading_error)

    # The older name of init().
    serve = init

    def _run_local(self, local_payload, pprint):
        if self.loading_exception is not None:
            raise self.loading_exception
        pprint("loading complete")
        if local_payload is None:
            _pipe.serve(self.apply_func, self.load_result, local_print=pprint)
            return None
        two_args = self.load_result is not None and _pipe.accepts_two(self.apply_func)
        result = self.apply_func(local_payload, self.load_result) if two_args else self.apply_func(local_payload)
        response = _pipe.result_response(result)
        pprint(response)
        return response


def Handler(apply_func, load_func=None):
    """The pre-ADK form: Algorithmia.handler(apply, load).serve()."""
    return ADK(apply_func, load_func)
