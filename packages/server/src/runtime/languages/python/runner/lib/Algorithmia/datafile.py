"""client.file("data://owner/collection/name"): a hosted file (docs/compatibility.md section 5, /v1/data/...)."""

import json
import tempfile

from .client import data_exists, data_path
from .errors import DataApiError


class DataFile(object):
    def __init__(self, client, dataUrl):
        self.client = client
        self.path = dataUrl[len("data://") :] if dataUrl.startswith("data://") else dataUrl.lstrip("/")
        self.url = data_path(dataUrl)
        self.size = None
        self.last_modified = None

    def getName(self):
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def set_attributes(self, attributes):
        self.size = attributes.get("size")
        self.last_modified = attributes.get("last_modified")

    def exists(self):
        return data_exists(self.client, self.url)

    def getBytes(self):
        response = self.client.request("GET", self.url, headers={"Accept": "application/octet-stream"})
        if response.status_code != 200:
            raise DataApiError(response.error_message())
        if response.headers.get("x-data-type") == "directory":
            raise DataApiError("{} is a directory, not a file".format(self.path))
        return response.content

    def getString(self):
        return self.getBytes().decode("utf-8")

    def getJson(self):
        return json.loads(self.getString())

    def getFile(self):
        """The file's content in a temporary file, opened for reading."""
        handle = tempfile.NamedTemporaryFile(delete=False)
        handle.write(self.getBytes())
        handle.close()
        return open(handle.name, "rb")

    def put(self, data):
        """Stores str (as UTF-8 text) or bytes, replacing the file if it exists."""
        if isinstance(data, str):
            body, content_type = data.encode("utf-8"), "text/plain"
        elif isinstance(data, (bytes, bytearray, memoryview)):
            body, content_type = bytes(data), "application/octet-stream"
        else:
            raise TypeError("put() takes str or bytes; use putJson() for other values")
        return self._put(body, content_type)

    def putJson(self, data):
        return self._put(json.dumps(data).encode("utf-8"), "application/json")

    def putFile(self, path):
        with open(path, "rb") as handle:
            return self._put(handle.read(), "application/octet-stream")

    def _put(self, body, content_type):
        response = self.client.request("PUT", self.url, body=body, content_type=content_type)
        if response.status_code >= 300:
            raise DataApiError(response.error_message())
        return self

    def delete(self):
        response = self.client.request("DELETE", self.url)
        if response.status_code >= 300:
            raise DataApiError(response.error_message())
        return True

    def __repr__(self):
        return "DataFile(data://%s)" % (self.path,)
