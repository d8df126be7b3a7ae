package com.algorithmia.data;

import com.algorithmia.APIException;
import com.algorithmia.AlgorithmiaClient;
import com.algorithmia.internal.Http;

/** What files and directories share: their data:// path and the HTTP path under /v1/data. */
abstract class DataObject {
  final AlgorithmiaClient client;
  /** owner/collection/... without data:// and slashes at either end. */
  final String path;

  DataObject(AlgorithmiaClient client, String dataUri) {
    this.client = client;
    String p = dataUri.startsWith("data://") ? dataUri.substring("data://".length()) : dataUri;
    this.path = p.replaceAll("^/+", "").replaceAll("/+$", "");
  }

  /** The last segment of the path. */
  public String getName() {
    int slash = path.lastIndexOf('/');
    return slash >= 0 ? path.substring(slash + 1) : path;
  }

  /** data://owner/collection/... */
  public String getDataUri() {
    return "data://" + path;
  }

  static String urlPath(String path) {
    StringBuilder p = new StringBuilder("/v1/data");
    for (String segment : path.split("/")) p.append('/').append(AlgorithmiaClient.encode(segment));
    return p.toString();
  }

  String url() {
    return urlPath(path);
  }

  /** HEAD: true for 200, false for 404, an exception for anything else. */
  public boolean exists() throws APIException {
    Http.Response res = client.request("HEAD", url(), null, null, null, null);
    if (res.status == 200) return true;
    if (res.status == 404) return false;
    throw new APIException(res.errorMessage());
  }

  static Http.Response check(Http.Response res, boolean exactly200) throws APIException {
    if (exactly200 ? res.status != 200 : res.status >= 300) throw new APIException(res.errorMessage());
    return res;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "(" + getDataUri() + ")";
  }
}
