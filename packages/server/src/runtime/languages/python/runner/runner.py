"""algohost's Python runner harness (docs/compatibility.md section 4; catalog/templates/README.md, the harness contract).

Started once per warm runner with the built algorithm as working directory:

    python -u /opt/algohost/runner/runner.py

It imports src/<Name>.py as module src.<Name> (<Name> = algoname of algorithmia.conf), calls
load() once if there is one, prints PIPE_INIT_COMPLETE, then answers one JSON request per stdin
line with one JSON line on the response FIFO. With an empty `.adk` file at the root it runs
src/<Name>.py as the main program instead, and that program's ADK(apply, load).init() serves.
If importing or loading fails, the sentinel still comes and every request gets LoadingError.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, "lib")


def main():
    # Python put the harness's own directory first on sys.path: the algorithm must not see it.
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == HERE:
        del sys.path[0]
    if LIB not in sys.path:
        sys.path.insert(0, LIB)
    sys.dont_write_bytecode = True  # the artifact and the harness are read-only

    from Algorithmia import _pipe

    _pipe.take_stdin()
    root = os.getcwd()
    name = algorithm_name(root)
    if name is None:
        serve_loading_error(_pipe, "no algorithm name: algorithmia.conf has no algoname")
    entry = os.path.join(root, "src", name + ".py")
    if not os.path.isfile(entry):
        serve_loading_error(_pipe, "src/{}.py not found (algorithmia.conf names the algorithm {!r})".format(name, name))
    if os.path.exists(os.path.join(root, ".adk")):
        run_adk(_pipe, root, entry, name)
    else:
        run_module(_pipe, root, name)


def algorithm_name(root):
    """algoname of algorithmia.conf, else the name the service passes in $ALGOHOST_ALGORITHM_NAME."""
    try:
        with open(os.path.join(root, "algorithmia.conf"), "rb") as handle:
            conf = json.loads(handle.read().decode("utf-8"))
        name = conf.get("algoname") if isinstance(conf, dict) else None
        if isinstance(name, str) and name:
            return name
    except (OSError, ValueError):
        pass
    return os.environ.get("ALGOHOST_ALGORITHM_NAME") or None


def run_module(pipe, root, name):
    """The classic entry point: module src.<Name> with apply(input) and an optional load()."""
    sys.path.insert(0, root)
    sys.path.append(os.path.join(root, "src"))
    module_name = "src." + name
    try:
        import importlib

        module = importlib.import_module(module_name)
    except BaseException as err:
        if pipe.started or isinstance(err, KeyboardInterrupt):
            raise  # the module itself served (ADK without .adk) and died mid-call: let it end
        serve_loading(pipe, None, err, "importing src/{}.py".format(name))
    apply = getattr(module, "apply", None)
    if not callable(apply):
        serve_loading_error(pipe, "src/{}.py defines no apply(input) function".format(name))
    load_and_serve(pipe, apply, getattr(module, "load", None))


def run_adk(pipe, root, entry, name):
    """ADK style: src/<Name>.py is the program; its ADK(apply, load).init() serves."""
    import runpy

    sys.path.insert(0, os.path.join(root, "src"))
    sys.path.append(root)
    sys.argv = [entry]
    try:
        namespace = runpy.run_path(entry, run_name="__main__")
    except BaseException as err:
        if pipe.started or isinstance(err, KeyboardInterrupt):
            raise  # serving had begun: an exit mid-call ends the runner (the call gets SystemExit)
        serve_loading(pipe, None, err, "running src/{}.py".format(name))
    # The program ended without serving. Accept a plain apply() (and load()) it defined.
    apply = namespace.get("apply")
    if not callable(apply):
        serve_loading_error(
            pipe,
            "src/{}.py has a .adk marker but never called ADK(apply, load).init() (from Algorithmia import ADK)".format(name),
        )
    load_and_serve(pipe, apply, namespace.get("load"))


def load_and_serve(pipe, apply, load):
    """Runs load() once if there is one, then serves; a load() that raises is a LoadingError."""
    load_result = None
    if callable(load):
        try:
            load_result = load()
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                raise
            serve_loading(pipe, apply, err, "load()")
    pipe.serve(apply, load_result)


def serve_loading(pipe, apply, err, what):
    pipe.serve(apply or _no_apply, loading_error=pipe.loading_response(err, what))


def serve_loading_error(pipe, message):
    pipe.serve(_no_apply, loading_error=pipe.loading_message_response(message))


def _no_apply(_input):
    raise RuntimeError("the algorithm did not load")


if __name__ == "__main__":
    main()
