"""MicroPython side of the VM portability test: a scripted host with the
semantics of flowc.host.ScriptedHost, and the job loop.

Runs on MicroPython only with what the VM itself provides (its msgpack
decoder keeps object key order, which MicroPython's json does not).
"""

import json

import flowc_vm as V


class ToolError(Exception):
    retriable = True

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class HostFailure(Exception):
    retriable = False

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def _copy(v):
    return V.copy_json(v)


def _matches(pattern, value):
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return False
        for k in pattern:
            if k not in value or not _matches(pattern[k], value[k]):
                return False
        return True
    if isinstance(pattern, list):
        if not isinstance(value, (list, tuple)) or len(value) != len(pattern):
            return False
        for i in range(len(pattern)):
            if not _matches(pattern[i], value[i]):
                return False
        return True
    if type(pattern) is bool or type(value) is bool:
        return pattern is value
    if type(pattern) in (int, float) and type(value) in (int, float):
        return pattern == value
    return type(pattern) is type(value) and pattern == value


class _Spec:
    def __init__(self, value):
        self.kind = "result"
        self.next = 0
        if isinstance(value, list):
            self.kind = "seq"
            self.specs = [_Spec(v) for v in value]
        elif isinstance(value, dict) and value:
            keys = set(value)
            if keys == {"throw"}:
                self.kind = "throw"
                self.message = value["throw"]
            elif keys == {"echo"}:
                self.kind = "echo"
            elif "match" in keys and keys <= {"match", "default"}:
                self.kind = "match"
                self.cases = [(c["args"], _Spec(c["result"])) for c in value["match"]]
                self.default = _Spec(value["default"]) if "default" in value else None
            elif keys <= {"output", "error"}:
                self.output = value.get("output")
                self.error = value.get("error")
            else:
                self.output = value
                self.error = None
        else:
            self.output = value
            self.error = None

    def answer(self, capability, name, args):
        if self.kind == "seq":
            spec = self.specs[min(self.next, len(self.specs) - 1)]
            self.next += 1
            return spec.answer(capability, name, args)
        if self.kind == "throw":
            raise HostFailure(self.message)
        if self.kind == "echo":
            return _copy(args)
        if self.kind == "match":
            for pattern, spec in self.cases:
                if _matches(pattern, args):
                    return spec.answer(capability, name, args)
            if self.default is not None:
                return self.default.answer(capability, name, args)
            raise HostFailure("the host script has no result for this call")
        if self.error:
            raise ToolError(self.error if isinstance(self.error, str) else json.dumps(self.error))
        return _copy(self.output)


class ScriptedHost:
    def __init__(self, script):
        self.specs = {}
        for k in script:
            self.specs[k] = _Spec(script[k])

    def call(self, capability, name, args):
        spec = self.specs.get(capability + ":" + name)
        if spec is None and capability == "tool":
            spec = self.specs.get(name)
        if spec is None:
            spec = self.specs.get("*")
        if spec is None:
            raise ToolError(capability[:1].upper() + capability[1:] + ' "' + name + '" not registered')
        return spec.answer(capability, name, args)

    def sleep(self, ms):
        pass


def main(path):
    with open(path, "rb") as fh:
        jobs = V.unpackb(fh.read())
    for job in jobs:
        name, data, inputs, script, limits = job[:5]
        try:
            program = V.load(data)
            if job[5:] == ["virtual"]:  # a virtual clock: script is a drivers.VirtualHost script
                record = program.run_virtual(inputs, script, limits[0], limits[1])
            else:
                record = program.run(inputs, ScriptedHost(script), limits[0], limits[1])
            print(json.dumps({"name": name, "record": record}))
        except V.VMError as exc:
            print(json.dumps({"name": name, "error": type(exc).__name__ + ": " + exc.message}))
