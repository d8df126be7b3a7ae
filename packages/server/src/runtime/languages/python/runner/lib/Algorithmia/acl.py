"""Read ACLs of hosted-data collections (docs/compatibility.md section 5)."""


class Acl(object):
    def __init__(self, read_acl):
        self.read_acl = list(read_acl)

    @staticmethod
    def from_acl_response(acl_response):
        return Acl((acl_response or {}).get("read", []))

    def to_api_param(self):
        return {"read": list(self.read_acl)}

    def __eq__(self, other):
        return isinstance(other, Acl) and other.read_acl == self.read_acl

    def __repr__(self):
        return "Acl(%r)" % (self.read_acl,)


class ReadAcl(object):
    public = Acl(["user://*"])
    my_algos = Acl(["algo://.my/*"])
    private = Acl([])
