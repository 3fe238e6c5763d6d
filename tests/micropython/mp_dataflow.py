"""MicroPython side of the dataflow portability test: a small scripted host
(answers "capability:name" keys; a list answers in turn; {"error": msg} is a
tool error) and the job loop, with the VM bundle (flowc_vm.py) beside it.
Prints one JSON line per job."""

import json

import flowc_vm as V


class ToolError(Exception):
    retriable = True

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class Host:
    def __init__(self, script):
        self.script = script
        self.turn = {}

    def call(self, capability, name, args):
        key = capability + ":" + name
        spec = self.script.get(key, self.script.get(name))
        if spec is None:
            raise ToolError("not scripted: " + key)
        if isinstance(spec, list):
            n = self.turn.get(key, 0)
            self.turn[key] = n + 1
            spec = spec[min(n, len(spec) - 1)]
        if "error" in spec:
            raise ToolError(spec["error"])
        return spec.get("output")

    def sleep(self, ms):
        pass


def main(path):
    with open(path, "rb") as fh:
        jobs = V.unpackb(fh.read())
    for name, data, inputs, script, trigger, payload in jobs:
        try:
            record = V.load(data).run(inputs, Host(script), trigger, payload)
            print(json.dumps({"name": name, "record": V.to_json(record)}))
        except Exception as exc:  # noqa: BLE001 - reported as data
            print(json.dumps({"name": name, "error": type(exc).__name__ + ": " + str(exc)}))
