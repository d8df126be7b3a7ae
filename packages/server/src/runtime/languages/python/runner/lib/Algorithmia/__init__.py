"""Algorithmia for code running on algohost (standard library only).

- `from Algorithmia import ADK; ADK(apply, load).init()` serves the runtime protocol.
- `Algorithmia.client()` calls other algorithms (`.algo("owner/name/version").pipe(input)`) and
  hosted data (`.file("data://...")`, `.dir("data://...")`) with the address and key the service
  gives the algorithm ($ALGORITHMIA_API, $ALGORITHMIA_API_KEY, $ALGOHOST_API_SOCKET). Only
  algorithms with pipeline_enabled get a key.
"""

from .adk import ADK, Handler

# Imported before `def client` below, so that Algorithmia.client is the function, not the submodule.
from .client import Client
from .errors import AlgorithmException, ApiError, ApiKeyMissingError, DataApiError

# Module-level settings, as in the Algorithmia client: Algorithmia.apiKey = "...".
apiKey = None
apiAddress = None

_default_client = None


def client(api_key=None, api_address=None, ca_cert=None, bearer_token=None):
    """A client; without arguments it reads $ALGORITHMIA_API and $ALGORITHMIA_API_KEY."""
    return Client(api_key, api_address, ca_cert, bearer_token)


def getDefaultClient():
    """The client of Algorithmia.algo/file/dir, made again when Algorithmia.apiKey or .apiAddress change
    (without them it reads the call's key at each request)."""
    global _default_client
    if _default_client is None or _default_client.apiKey != (apiKey or None) or (apiAddress and _default_client.apiAddress != apiAddress):
        _default_client = client(apiKey, apiAddress)
    return _default_client


def algo(algoRef):
    return getDefaultClient().algo(algoRef)


def file(dataUrl):
    return getDefaultClient().file(dataUrl)


def dir(dataUrl):
    return getDefaultClient().dir(dataUrl)


def handler(apply_func, load_func=None):
    return Handler(apply_func, load_func)

