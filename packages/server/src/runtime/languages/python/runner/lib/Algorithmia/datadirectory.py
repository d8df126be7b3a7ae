"""client.dir("data://owner/collection"): a hosted directory (docs/compatibility.md section 5, /v1/data/...)."""

import json

from .acl import Acl
from .client import data_exists, data_path
from .datafile import DataFile
from .errors import DataApiError


class DataDirectory(object):
    def __init__(self, client, dataUrl):
        self.client = client
        path = dataUrl[len("data://") :] if dataUrl.startswith("data://") else dataUrl.lstrip("/")
        self.path = path.rstrip("/")
        self.url = data_path(dataUrl)

    def getName(self):
        return self.path.rsplit("/", 1)[-1]

    def _parent_and_name(self):
        if "/" not in self.path:
            raise DataApiError("data://{} has no parent to create it in".format(self.path))
        parent, name = self.path.rsplit("/", 1)
        return parent, name

    def exists(self):
        return data_exists(self.client, self.url)

    def create(self, acl=None):
        """POST {"name", "acl"?} on the parent."""
        parent, name = self._parent_and_name()
        body = {"name": name}
        if acl is not None:
            body["acl"] = acl.to_api_param() if isinstance(acl, Acl) else acl
        response = self.client.request("POST", data_path(parent), body=json.dumps(body).encode("utf-8"), content_type="application/json")
        if response.status_code != 200:
            raise DataApiError(response.error_message())
        return self

    def delete(self, force=False):
        response = self.client.request("DELETE", self.url, query={"force": "true"} if force else None)
        if response.status_code >= 300:
            raise DataApiError(response.error_message())
        return True

    def file(self, name):
        return DataFile(self.client, "data://{}/{}".format(self.path, name))

    def dir(self, name):
        return DataDirectory(self.client, "data://{}/{}".format(self.path, name))

    def _pages(self, query=None):
        marker = None
        while True:
            params = dict(query or {})
            if marker:
                params["marker"] = marker
            response = self.client.request("GET", self.url, query=params or None)
            if response.status_code != 200:
                raise DataApiError(response.error_message())
            page = response.json()
            yield page
            marker = page.get("marker") if isinstance(page, dict) else None
            if not marker:
                return

    def list(self):
        """Every entry: DataDirectory for folders, DataFile (with size, last_modified) for files."""
        for page in self._pages():
            for folder in page.get("folders", []) or []:
                yield self.dir(folder["name"])
            for entry in page.get("files", []) or []:
                item = self.file(entry["filename"])
                item.set_attributes(entry)
                yield item

    def files(self):
        return (e for e in self.list() if isinstance(e, DataFile))

    def dirs(self):
        return (e for e in self.list() if isinstance(e, DataDirectory))

    def get_permissions(self):
        response = self.client.request("GET", self.url, query={"acl": "true"})
        if response.status_code != 200:
            raise DataApiError(response.error_message())
        return Acl.from_acl_response(response.json().get("acl"))

    def update_permissions(self, acl):
        body = {"acl": acl.to_api_param() if isinstance(acl, Acl) else acl}
        response = self.client.request("PATCH", self.url, body=json.dumps(body).encode("utf-8"), content_type="application/json")
        if response.status_code != 200:
            raise DataApiError(response.error_message())
        return True

    def __repr__(self):
        return "DataDirectory(data://%s)" % (self.path,)
